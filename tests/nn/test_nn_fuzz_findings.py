"""What the nn/optim differential campaign found (scripts/fuzz_nn.py), one test each, with
PyTorch 2.13's answers written out so they run without torch.

Each test failed before its fix; the seed that found it is in its docstring.
"""

import numpy as np
import pytest

import tinygrad_edu as tg

nn, F = tg.nn, tg.nn.functional


def _first_lines(excinfo, n=1):
    return str(excinfo.value).splitlines()[:n]


def test_embedding_padding_row_keeps_its_numbers_and_gets_no_gradient():
    """Seeds 13, 56, 103: the padding row came out as zeros whatever the weight held (a
    loaded or trained table), where PyTorch returns the row and only blocks its gradient."""
    emb = nn.Embedding(3, 2, padding_idx=1)
    emb.load_state_dict({"weight": np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])})
    out = emb(tg.tensor([1, 2, 1]))
    np.testing.assert_array_equal(out.numpy(), [[3.0, 4.0], [5.0, 6.0], [3.0, 4.0]])
    (out * tg.tensor([[1.0, 1.0], [2.0, 3.0], [1.0, 1.0]])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy(), [[0, 0], [0, 0], [2, 3]])


def test_embedding_negative_padding_idx_counts_from_the_end():
    emb = nn.Embedding(3, 1, padding_idx=-1)
    emb.load_state_dict({"weight": np.array([[1.0], [2.0], [7.0]])})
    out = emb(tg.tensor([2, 0]))
    out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), [[7.0], [1.0]])
    np.testing.assert_array_equal(emb.weight.grad.numpy(), [[1.0], [0.0], [0.0]])


@pytest.mark.parametrize(
    "layer, shape", [(nn.BatchNorm1d(2), (1, 2)), (nn.BatchNorm1d(2), (1, 2, 1)),
                     (nn.BatchNorm2d(2), (1, 2, 1, 1))],
)  # fmt: skip
def test_batch_norm_with_one_value_per_channel_refuses_to_train(layer, shape):
    """Seed 6: one value per channel has variance 0, so the output is 0 whatever the input;
    PyTorch raises "Expected more than 1 value per channel when training"."""
    with pytest.raises(ValueError) as e:
        layer(tg.ones(*shape))
    assert _first_lines(e) == [
        f"batch_norm: expected more than 1 value per channel when training, got input of "
        f"shape {shape}"
    ]
    assert str(e.value).splitlines()[-1] == (
        "  hint: use a batch of 2 or more, or call model.eval() to normalise with the running "
        "statistics"
    )
    layer.eval()
    assert layer(tg.ones(*shape)).shape == shape  # the running statistics need no batch


def test_batch_norm_momentum_none_is_the_cumulative_average():
    """Seed 175: momentum=None raised TypeError; PyTorch averages every batch so far equally."""
    bn = nn.BatchNorm1d(1, momentum=None)
    bn(tg.tensor([[1.0], [3.0]]))  # mean 2, unbiased variance 2
    np.testing.assert_allclose(bn.running_mean.numpy(), [2.0])
    np.testing.assert_allclose(bn.running_var.numpy(), [2.0])
    bn(tg.tensor([[0.0], [8.0], [10.0]]))  # mean 6, unbiased variance 28
    np.testing.assert_allclose(bn.running_mean.numpy(), [4.0])  # (2 + 6) / 2
    np.testing.assert_allclose(bn.running_var.numpy(), [15.0])  # (2 + 28) / 2
    assert bn.num_batches_tracked.item() == 2


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pooling_refuses_padding_over_half_the_window(pool):
    """Seed 209: a 1 x 1 window with padding 1 gave windows of padding alone (-inf for
    max pooling); PyTorch raises "pad should be at most half of effective kernel size"."""
    with pytest.raises(ValueError) as e:
        pool(tg.zeros(1, 1, 3, 3), 1, padding=1)
    name = pool.__name__
    assert _first_lines(e, 3) == [
        f"{name}: padding (1, 1) is more than half of the 1 x 1 window",
        f"  built at: tests/nn/test_nn_fuzz_findings.py, line {_line_of('pool(tg.zeros')}: "
        "pool(tg.zeros(1, 1, 3, 3), 1, padding=1)",
        "  hint: use padding of at most (0, 0) for this window",
    ]
    assert pool(tg.zeros(1, 1, 3, 3), 2, padding=1).shape == (1, 1, 2, 2)  # half is allowed


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line)


def test_conv_same_padding_puts_an_even_kernels_extra_zero_after():
    """Seeds 691, 910: padding='same' with an even kernel padded (k - 1) // 2 = 0 on both
    sides, so the output was smaller than the input; PyTorch pads the extra one after."""
    x = tg.tensor([[[[1.0, 2.0, 3.0]]]])
    w = tg.tensor([[[[1.0, 10.0]]]])
    out = F.conv2d(x, w, padding="same")
    np.testing.assert_array_equal(out.numpy(), [[[[21.0, 32.0, 3.0]]]])
    w3 = tg.tensor([[[[1.0, 10.0]]]])  # dilation 2: 2 zeros in all, one each side
    np.testing.assert_array_equal(
        F.conv2d(x, w3, padding="same", dilation=2).numpy(), [[[[20.0, 31.0, 2.0]]]]
    )
    conv = nn.Conv2d(1, 1, (2, 2), padding="same", bias=False)
    assert conv(tg.zeros(1, 1, 3, 4)).shape == (1, 1, 3, 4)


def test_conv_same_padding_refuses_a_stride():
    with pytest.raises(ValueError) as e:
        nn.Conv2d(1, 1, 2, stride=2, padding="same")
    assert _first_lines(e) == [
        "Conv2d: padding='same' is not supported for strided convolutions (stride 2)"
    ]
    with pytest.raises(ValueError) as e:
        F.conv2d(tg.zeros(1, 1, 3, 3), tg.zeros(1, 1, 2, 2), stride=2, padding="same")
    assert _first_lines(e) == [
        "conv2d: padding='same' is not supported for strided convolutions (stride (2, 2))"
    ]


# --- the class options of the losses (refused before; the campaign now draws them) ------

_LOGITS = [[2.0, 0.0, -1.0], [0.5, 0.5, 0.0], [1.0, -1.0, 3.0]]
_WEIGHT = [1.0, 2.0, 0.5]


@pytest.mark.parametrize(
    "options, loss, grad",
    [
        ({"weight": _WEIGHT}, 2.6242055201513144,
         [[-0.044630075862, 0.032627199824, 0.012002876038],
          [0.05480739017, 0.05480739017, -0.10961478034],
          [0.067034530186, -0.562356434299, 0.495321904113]]),
        ({"ignore_index": 2}, 2.1563888240280926,
         [[-0.078102632759, 0.057097599692, 0.021005033067], [0.0, 0.0, 0.0],
          [0.058655213913, -0.492061880012, 0.433406666099]]),
        ({"label_smoothing": 0.2}, 1.879154800889962,
         [[-0.007623977395, 0.015842844239, -0.008218866844],
          [0.105661688175, 0.105661688175, -0.211323376349],
          [0.01688125372, -0.283596808897, 0.266715555177]]),
        ({"weight": _WEIGHT, "ignore_index": 1, "label_smoothing": 0.3}, 1.065968254731349,
         [[0.057322980804, -0.053396693764, -0.003926287039],
          [0.112370807889, 0.045704141222, -0.158074949111], [0.0, 0.0, 0.0]]),
    ],
)  # fmt: skip
def test_cross_entropy_weight_ignore_index_and_label_smoothing_as_pytorch(options, loss, grad):
    """PyTorch 2.13's values: the mean divides by the total weight of the targets kept."""
    x = tg.tensor(_LOGITS, requires_grad=True)
    out = nn.CrossEntropyLoss(**options)(x, tg.tensor([0, 2, 1]))
    out.backward()
    np.testing.assert_allclose(out.item(), loss, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), grad, atol=1e-11)


def test_nll_loss_weight_and_ignore_index_as_pytorch():
    x = tg.tensor(_LOGITS, requires_grad=True)
    out = nn.NLLLoss(weight=tg.tensor(_WEIGHT), ignore_index=0, reduction="sum")(x, [0, 2, 1])
    out.backward()
    assert out.item() == 2.0  # -(0.5 * 0.0) - (2.0 * -1.0): row 0 is ignored
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0], [0, 0, -0.5], [0, -2, 0]])


def test_every_target_ignored_gives_nan_and_no_gradient():
    x = tg.tensor(_LOGITS, requires_grad=True)
    out = F.cross_entropy(x, [1, 1, 1], ignore_index=1)
    out.backward()
    assert np.isnan(out.item())  # 0 / 0, as PyTorch
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 3)))


def test_binary_cross_entropy_weight_scales_each_element():
    """BCEWithLogitsLoss took `weight` and ignored it (a silently different loss)."""
    p, y, w = [[0.2, 0.9], [0.5, 0.1]], [[0.0, 1.0], [1.0, 0.0]], tg.tensor([2.0, 0.5])
    np.testing.assert_allclose(nn.BCELoss(weight=w)(tg.tensor(p), y).item(), 0.4844854948515341)
    np.testing.assert_allclose(
        nn.BCEWithLogitsLoss(weight=w)(tg.tensor(p), y).item(), 0.7718017436315566
    )


def test_cross_entropy_refuses_a_weight_of_the_wrong_size_and_a_smoothing_over_one():
    with pytest.raises(tg.ShapeError) as e:
        F.cross_entropy(tg.tensor(_LOGITS), [0, 1, 2], weight=[1.0, 2.0])
    assert _first_lines(e) == [
        "cross_entropy: expected one weight per class, shape (3,), got weight of shape (2,)"
    ]
    with pytest.raises(ValueError) as e:
        F.cross_entropy(tg.tensor(_LOGITS), [0, 1, 2], label_smoothing=1.5)
    assert _first_lines(e) == [
        "cross_entropy: label_smoothing must be between 0.0 and 1.0, got 1.5"
    ]


def test_avg_pool_count_include_pad_false_and_divisor_override_as_pytorch():
    """AvgPool2d did not take PyTorch's count_include_pad and divisor_override (TypeError)."""
    x = tg.arange(12.0).reshape(1, 1, 3, 4)
    out = nn.AvgPool2d(2, 2, 1, count_include_pad=False)(x)
    np.testing.assert_array_equal(out.numpy(), [[[[0.0, 1.5, 3.0], [6.0, 7.5, 9.0]]]])
    out = F.avg_pool2d(x, 2, 2, 1, divisor_override=3)
    np.testing.assert_array_equal(out.numpy(), [[[[0.0, 1.0, 1.0], [4.0, 10.0, 6.0]]]])
    with pytest.raises(ValueError) as e:
        F.avg_pool2d(x, 2, ceil_mode=True)
    assert _first_lines(e) == ["avg_pool2d: ceil_mode=True is not supported"]


def test_softmax_without_dim_takes_pytorchs_implicit_axis():
    """nn.Softmax() used axis -1 for every input; PyTorch's implicit choice (deprecated,
    with a warning) is axis 0 for 0-, 1- and 3-D input, else axis 1: a 3-D input differed."""
    x = tg.tensor(np.arange(8.0).reshape(2, 2, 2))
    with pytest.warns(UserWarning, match="implicit dimension choice for softmax"):
        out = nn.Softmax()(x)
    np.testing.assert_allclose(out.numpy().sum(axis=0), np.ones((2, 2)))
    np.testing.assert_allclose(out.numpy()[1, 0, 0], 1 / (1 + np.exp(-4.0)))
    with pytest.warns(UserWarning):
        out = nn.LogSoftmax()(tg.tensor(np.arange(8.0).reshape(2, 2, 2, 1)))
    np.testing.assert_allclose(np.exp(out.numpy()).sum(axis=1), np.ones((2, 2, 1)))
    assert repr(nn.Softmax()) == "Softmax(dim=None)"  # as PyTorch's


def test_a_dilated_window_too_big_for_the_input_is_named_by_its_span():
    """Seed 22: "the input is 1 x 2 (padded 1 x 2), smaller than the 1 x 2 window" - true
    only of the 1 x 3 span a 1 x 2 kernel with dilation 2 covers (PyTorch says "Kernel
    size: (1 x 3)")."""
    with pytest.raises(tg.ShapeError) as e:
        F.conv2d(tg.zeros(1, 1, 1, 2), tg.zeros(1, 1, 1, 2), dilation=2)
    assert _first_lines(e) == [
        "conv2d: the input is 1 x 2 (padded 1 x 2), smaller than the 1 x 3 window "
        "(a 1 x 2 kernel with dilation (2, 2))"
    ]
    with pytest.raises(tg.ShapeError) as e:
        F.max_pool2d(tg.zeros(1, 1, 1, 2), 3)
    assert _first_lines(e) == [
        "max_pool2d: the input is 1 x 2 (padded 1 x 2), smaller than the 3 x 3 window"
    ]


def test_max_pool_takes_pytorchs_ceil_mode_and_return_indices_at_their_defaults():
    """MaxPool2d and max_pool2d raised Python's TypeError for `ceil_mode=False` and
    `return_indices=False`, which code copied from PyTorch often spells out; True is
    refused by name. MaxPool2d keeps PyTorch's order (return_indices before ceil_mode)."""
    x = tg.arange(16.0).reshape(1, 1, 4, 4)
    expected = [[[[5.0, 7.0], [13.0, 15.0]]]]
    np.testing.assert_array_equal(nn.MaxPool2d(2, 2, 0, 1, False, False)(x).numpy(), expected)
    out = F.max_pool2d(x, 2, ceil_mode=False, return_indices=False)
    np.testing.assert_array_equal(out.numpy(), expected)
    with pytest.raises(ValueError) as e:
        nn.MaxPool2d(2, ceil_mode=True)
    assert _first_lines(e) == ["MaxPool2d: ceil_mode=True is not supported"]
    with pytest.raises(ValueError) as e:
        F.max_pool2d(x, 2, return_indices=True)
    assert _first_lines(e) == ["max_pool2d: return_indices=True is not supported"]
