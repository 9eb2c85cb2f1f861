"""tg.static.load on hostile files: every malformed file is a FormatError saying what is
wrong (never BadZipFile, EOFError, RecursionError, KeyError...), sizes are checked from
the .npy headers before any data is read, names are NFKC-normalised, and while_loop
stops after its iteration limit instead of hanging."""

import io
import json
import tracemalloc
import zipfile

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.static import io as static_io
from tinygrad_edu.static import runtime

HINT = "\n  hint: only load files written by StaticGraph.save"


def saved(tmp_path, kind="plain"):
    """Save a small graph of `kind`; returns (base path, json doc)."""
    x = tg.tensor([1.0, 2.0])
    if kind == "plain":
        g = tg.static.trace(lambda x: (x * 2.0).exp().sum(), x)
    elif kind == "grad":
        g = tg.static.trace(lambda x: (x * 2.0).exp().sum(), x).grad()
    else:
        g = tg.static.trace(
            lambda x: tg.static.while_loop(lambda v: v.sum() < 10, lambda v: v * 2.0, x), x
        )
    base = tmp_path / kind
    g.save(base)
    return base, json.loads((tmp_path / f"{kind}.json").read_text())


def write_json(base, doc):
    base.with_suffix(".json").write_text(json.dumps(doc))


def npy_bytes(descr, shape, data=b""):
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return out.getvalue() + data


def write_npz(base, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(base.with_suffix(".npz"), "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def prog(doc):
    return doc["program"]


# --- edits of the JSON document (the .npz stays valid) ---------------------------------

JSON_CASES = {
    "program is a list": (
        "plain",
        lambda d: d.update(program=[]),
        "load: program: a program must be an object with exactly the keys",
    ),
    "vars is an object": (
        "plain",
        lambda d: prog(d).update(vars={}),
        "load: program.vars: expected a list, got dict",
    ),
    "variable missing dtype": (
        "plain",
        lambda d: prog(d)["vars"][0].pop("dtype"),
        "load: program.vars[0]: a variable needs exactly id, name, shape",
    ),
    "id is a string": (
        "plain",
        lambda d: prog(d)["vars"][0].update(id="1"),
        "load: program.vars[0]: id must be a new positive integer, got '1'",
    ),
    "shape is a string": (
        "plain",
        lambda d: prog(d)["vars"][0].update(shape="3"),
        "load: program.vars[0]: a shape must be a list of non-negative integers, got '3'",
    ),
    "negative shape": (
        "plain",
        lambda d: prog(d)["vars"][0].update(shape=[-2]),
        "a shape must be a list of non-negative integers, got [-2]",
    ),
    "dtype is a list": (
        "plain",
        lambda d: prog(d)["vars"][0].update(dtype=["float64"]),
        "load: program.vars[0]: unsupported dtype ['float64']",
    ),
    "dtype object": (
        "plain",
        lambda d: prog(d)["vars"][0].update(dtype="object"),
        "load: program.vars[0]: unsupported dtype 'object'",
    ),
    "name is a number": (
        "plain",
        lambda d: prog(d)["vars"][0].update(name=5),
        "load: program.vars[0]: name must be a string",
    ),
    "huge declared shape": (
        "plain",
        lambda d: prog(d)["vars"][0].update(shape=[10**9, 10**9]),
        "shape (1000000000, 1000000000) has 1000000000000000000 elements",
    ),
    "equation missing attrs": (
        "plain",
        lambda d: prog(d)["eqns"][0].pop("attrs"),
        "load: program.eqns[0]: an equation needs exactly op, in, out",
    ),
    "inputs of an equation a string": (
        "plain",
        lambda d: prog(d)["eqns"][0].update({"in": "1"}),
        "load: program.eqns[0].in: expected a list, got str",
    ),
    "unknown op": (
        "plain",
        lambda d: prog(d)["eqns"][0].update(op="__import__"),
        "load: program.eqns[0]: unknown op '__import__'",
    ),
    "op is a number": (
        "plain",
        lambda d: prog(d)["eqns"][0].update(op=5),
        "load: program.eqns[0]: unknown op 5",
    ),
    "attrs a list": (
        "plain",
        lambda d: prog(d)["eqns"][0].update(attrs=[]),
        "load: program.eqns[0]: attrs must be an object",
    ),
    "deeply nested attribute": (
        "plain",
        lambda d: prog(d)["eqns"][2].update(attrs={"axis": json.loads("[" * 200 + "]" * 200)}),
        "load: program.eqns[2].attrs.axis: attribute lists nested deeper than 32",
    ),
    "site a number": (
        "plain",
        lambda d: prog(d)["eqns"][0].update(site=5),
        "load: program.eqns[0]: site must be a string or null",
    ),
    "top level missing structure": (
        "plain",
        lambda d: d.pop("structure"),
        "the top level needs format, version, name, structure",
    ),
    "version 2": (
        "plain",
        lambda d: d.update(version=2),
        "format version 2, this tinygrad_edu reads version 1",
    ),
    "output never computed": (
        "plain",
        lambda d: prog(d).update(outputs=[77]),
        "load: program.outputs: 77 is not computed by the program",
    ),
    "vjp types not pairs": (
        "grad",
        lambda d: next(e for e in prog(d)["eqns"] if e["op"] == "vjp")["attrs"].update(_in_types=5),
        "load: program: malformed (TypeError:",
    ),
    "vjp needs not booleans": (
        "grad",
        lambda d: next(e for e in prog(d)["eqns"] if e["op"] == "vjp")["attrs"].update(needs=[1]),
        "vjp needs one boolean per forward input and one output per True",
    ),
    "while_loop limit a string": (
        "loop",
        lambda d: prog(d)["eqns"][0]["attrs"].update(max_iterations="many"),
        "load: program.eqns[0]: max_iterations must be a non-negative integer, got 'many'",
    ),
    "while_loop without body": (
        "loop",
        lambda d: prog(d)["eqns"][0]["subs"].pop("body"),
        "while_loop needs sub-programs cond and body and n_carry",
    ),
    "names that collide once normalised": (
        "plain",
        lambda d: [
            prog(d)["vars"][0].update(name="x"),
            prog(d)["vars"][1].update(name="\uff58"),
        ],  # a fullwidth x
        "load: program.vars[1]: names 'x' and '\uff58' are the same name once normalised "
        "(NFKC), as Python reads identifiers",
    ),
    "declared input type the op cannot take": (
        "plain",
        lambda d: prog(d)["vars"][0].update(shape=[2, 2]),
        "load: program.eqns[0]: Mul computes float64[2, 2] from its declared inputs, the file "
        "declares float64[2]",
    ),
    "declared output type that is not what the op computes": (
        "plain",
        lambda d: prog(d)["vars"][-1].update(dtype="float32"),
        "Sum computes float64[] from its declared inputs, the file declares float32[]",
    ),
    "attribute that makes the op fail": (
        "plain",
        lambda d: prog(d)["eqns"][2]["attrs"].update(axis=5),
        "load: program.eqns[2]: Sum cannot run on its declared inputs (float64[2]): AxisError:",
    ),
    "loop body of other types than the carry": (
        "loop",
        lambda d: [
            v.update(shape=[3])
            for v in prog(d)["eqns"][0]["subs"]["body"]["vars"]
            if v["shape"] == [2]
        ],  # a consistent body, for another carry
        "load: program.eqns[0]: sub-program 'body' does not take and give the types the "
        "while_loop equation declares",
    ),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_a_malformed_json_document_is_a_format_error_saying_what(tmp_path, case):
    kind, edit, text = JSON_CASES[case]
    base, doc = saved(tmp_path, kind)
    edit(doc)
    write_json(base, doc)
    with pytest.raises(tg.static.FormatError) as info:
        tg.static.load(base)
    assert text in str(info.value)
    assert str(info.value).endswith(HINT)
    assert info.value.__cause__ is None


# --- whole files and .npz archives -----------------------------------------------------


def truncated_zip(base):
    data = base.with_suffix(".npz").read_bytes()
    base.with_suffix(".npz").write_bytes(data[: len(data) // 2])


def crc_damaged(base):
    arr = np.arange(1000.0)
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a0.npy", npy_bytes("<f8", (1000,), arr.tobytes()))
    data = bytearray(raw.getvalue())
    data[len(data) // 3] ^= 0xFF  # inside the compressed data
    base.with_suffix(".npz").write_bytes(bytes(data))


FILE_CASES = {
    "truncated zip": (truncated_zip, "not a readable .npz archive (BadZipFile:"),
    "not a zip at all": (
        lambda b: b.with_suffix(".npz").write_bytes(b"PK\x03\x04garbage" * 9),
        "not a readable .npz archive",
    ),
    "damaged compressed data": (crc_damaged, "not a readable .npz archive"),
    "member that is not .npy": (
        lambda b: write_npz(b, {"a0.txt": b"hello"}),
        "member 'a0.txt' is not a uniquely named .npy array",
    ),
    "bad .npy magic": (
        lambda b: write_npz(b, {"a0.npy": b"\x93NUMPX" + b"\0" * 64}),
        "not a readable .npz archive (ValueError:",
    ),
    "object array": (
        lambda b: write_npz(b, {"a0.npy": npy_bytes("|O", (1,), b"\0" * 8)}),
        "load: program.consts[0]: array 'a0' is not a plain numeric array",
    ),
    "complex array": (
        lambda b: write_npz(b, {"a0.npy": npy_bytes("<c16", (1,), b"\0" * 16)}),
        "load: program.consts[0]: array 'a0' has unsupported dtype complex128",
    ),
    "header larger than its data": (
        lambda b: write_npz(b, {"a0.npy": npy_bytes("<f8", (100,), b"\0" * 16)}),
        "array 'a0': its header declares 800 bytes of data, the archive holds 16",
    ),
    "huge declared array": (
        lambda b: write_npz(b, {"a0.npy": npy_bytes("<f8", (10**12,))}),
        "array 'a0' declares shape (1000000000000,), 1000000000000 elements, more than the "
        "50000000 allowed",
    ),
    "JSON nested 100,000 deep": (
        lambda b: b.with_suffix(".json").write_text("[" * 100_000 + "]" * 100_000),
        "not valid JSON for this format (nested too deeply)",
    ),
    "JSON not UTF-8": (
        lambda b: b.with_suffix(".json").write_bytes(b'{"a": "\xff\xfe"}'),
        "not valid JSON",
    ),
}


@pytest.mark.parametrize("case", list(FILE_CASES))
def test_a_malformed_file_is_a_format_error_saying_what(tmp_path, case):
    damage, text = FILE_CASES[case]
    base, _ = saved(tmp_path)
    damage(base)
    with pytest.raises(tg.static.FormatError) as info:
        tg.static.load(base)
    assert text in str(info.value)
    assert info.value.__cause__ is None


def test_more_than_twenty_kinds_of_malformed_file_are_covered():
    assert len(JSON_CASES) + len(FILE_CASES) >= 30


def test_a_small_compressed_file_is_rejected_from_its_header_before_it_expands(tmp_path):
    base, _ = saved(tmp_path)
    declared = static_io.MAX_ARRAY_BYTES + 8 * 2**20  # just over the cap: 264 MiB
    with (
        zipfile.ZipFile(base.with_suffix(".npz"), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("a0.npy", "w", force_zip64=True) as f,
    ):
        f.write(npy_bytes("<f8", (declared // 8,)))
        chunk = bytes(2**20)
        for _ in range(declared // len(chunk)):
            f.write(chunk)
    assert base.with_suffix(".npz").stat().st_size < 2 * 2**20  # a small file on disk
    tracemalloc.start()
    try:
        with pytest.raises(
            tg.static.FormatError, match="the arrays declare more than the 268435456 bytes allowed"
        ):
            tg.static.load(base)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20  # nothing near the declared size was allocated


def test_a_good_file_still_round_trips_after_all_the_checks(tmp_path):
    base, _ = saved(tmp_path, "grad")
    np.testing.assert_allclose(
        tg.static.load(base)(tg.tensor([0.5, 1.0])).numpy(), 2 * np.exp([1.0, 2.0])
    )


# --- names ------------------------------------------------------------------------------


def test_a_fullwidth_constant_name_does_not_become_the_input_x():
    c = tg.tensor([10.0], name="\uff58")  # fullwidth x: Python reads it as `x`
    g = tg.static.trace(lambda x: x + c, tg.tensor([1.0]))
    assert g(tg.tensor([1.0])).tolist() == [11.0]  # not x + x
    assert "x_2: float64[1] = const [10.]" in str(g)
    assert "v3 = x + x_2" in g.python_source


# --- while_loop's iteration limit --------------------------------------------------------


def endless(x):
    return tg.static.while_loop(lambda v: v.sum() > -1.0, lambda v: v * 1.0, x, max_iterations=30)


def loop_error(site):
    return (
        "while_loop: stopped after 30 iterations: the condition still held\n"
        f"  built at: {site}\n  hint: check that body_fn moves the carry toward making "
        "cond_fn false, or pass max_iterations= a larger number if the loop really needs "
        "more steps"
    )


def test_an_endless_loop_stops_with_the_loops_line_eagerly_traced_and_loaded(tmp_path):
    from static_helpers import line_of

    site = line_of(endless, "tg.static.while_loop(")
    with pytest.raises(RuntimeError) as info:
        endless(tg.ones(2))
    assert str(info.value) == loop_error(site)
    with pytest.raises(RuntimeError) as info:
        tg.static.trace(endless, tg.ones(2))  # the trace computes the value too
    assert str(info.value) == loop_error(site)

    bounded = tg.static.trace(
        lambda x: tg.static.while_loop(
            lambda v: v.sum() < 8.0, lambda v: v * 2.0, x, max_iterations=30
        ),
        tg.ones(2),
    )
    bounded.save(tmp_path / "loop")
    loaded = tg.static.load(tmp_path / "loop")
    assert loaded(tg.ones(2)).tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="stopped after 30 iterations") as info:
        loaded(-tg.ones(2))  # never reaches 8: would spin forever
    assert "built at: tests/static/test_static_load_safety.py, line " in str(info.value)


def test_the_default_limit_is_documented_and_can_be_changed(monkeypatch):
    assert runtime.MAX_ITERATIONS == 100_000
    monkeypatch.setattr(runtime, "MAX_ITERATIONS", 5)
    g = tg.static.trace(
        lambda x: tg.static.while_loop(lambda v: v.sum() < 8.0, lambda v: v * 2.0, x), tg.ones(1)
    )
    with pytest.raises(RuntimeError, match="stopped after 5 iterations"):
        g(tg.tensor([0.0]))
    assert g(tg.tensor([0.5])).tolist() == [8.0]  # 4 steps: under the limit
    with pytest.raises(TypeError, match="max_iterations must be a non-negative int"):
        tg.static.while_loop(lambda v: v.sum() < 1, lambda v: v, tg.ones(1), max_iterations=2.5)
