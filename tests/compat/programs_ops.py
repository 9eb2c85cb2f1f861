"""More PyTorch programs for `test_programs.py` (issue 30): the ops course code reaches for.

Our own programs, in the style of d2l's chapters 2-6 (data manipulation, linear algebra,
parameter management, convolutions by hand, pooling), makemore's bigram and MLP, a tour
of tensor ops in the manner of the 60-minute blitz, and small autograd checks in the
manner of micrograd's tests. Written once as plain PyTorch; random draws differ between
the libraries, so what they print holds for any draw.
"""

LABELS_AND_BATCHES = """
import torch
import torch.nn.functional as F

n, k = 6, 3
labels = torch.arange(n) % k
print(labels, labels.dtype)
batch = torch.arange(n) // 4
print(batch, torch.bincount(batch))
print(F.one_hot(labels, num_classes=k).sum(0))
x = torch.linspace(-2, 2, n)
print(torch.remainder(x, 1.5))
print(torch.fmod(x, 1.5))
print(x.div(0.75, rounding_mode="floor"), x.div(0.75, rounding_mode="trunc"))
even = (torch.arange(n) % 2 == 0)
print(x[even].sum().item(), x[~even].sum().item())
print((labels == 1) & even, (labels == 1) | even)
print(torch.arange(10) % -3, -7 // torch.tensor([2, -2, 3]))
"""

D2L_DATA_MANIPULATION = """
import torch

x = torch.arange(12, dtype=torch.float32)
print(x, x.numel(), x.shape)
X = x.reshape(3, 4)
print(X)
print(torch.zeros((2, 3, 4)).shape, torch.ones((2, 3, 4)).sum())
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
print(X + Y, X - Y, X * Y, X / Y, X ** 2, sep="\\n")
print(torch.exp(x)[:3])
print(torch.cat((X, Y), dim=0).shape, torch.cat((X, Y), dim=1).shape)
print(X == Y)
print(X.sum())
a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
print(a + b)
print(X[-1], X[1:3])
X[1, 2] = 17
X[:2, :] = 12
print(X)
Z = torch.zeros_like(Y)
Z[:] = X + Y
print(Z)
A = X.numpy()
B = torch.from_numpy(A)
print(type(A).__name__, B.shape)
c = torch.tensor([3.5])
print(c, c.item(), float(c), int(c))
"""

D2L_LINEAR_ALGEBRA = """
import torch

x = torch.tensor(3.0)
y = torch.tensor(2.0)
print(x + y, x * y, x / y, x ** y)
x = torch.arange(4, dtype=torch.float32)
print(x, x[3], len(x), x.shape)
A = torch.arange(6, dtype=torch.float32).reshape(3, 2)
print(A, A.T, sep="\\n")
S = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
print(S == S.T)
B = A.clone()
print(A * B)
a = 2
X = torch.arange(24).reshape(2, 3, 4)
print((a + X).shape, (a * X).shape)
print(A.sum(), A.sum(axis=0), A.sum(axis=1), A.sum(axis=[0, 1]) == A.sum())
print(A.mean(), A.sum() / A.numel(), A.mean(axis=0))
sum_A = A.sum(axis=1, keepdims=True)
print(sum_A, A / sum_A, A.cumsum(axis=0), sep="\\n")
y = torch.ones(4, dtype=torch.float32)
print(torch.dot(x, y), torch.sum(x * y))
print(torch.mv(A.T, torch.ones(3)) if hasattr(torch, "mv") else torch.matmul(A.T, torch.ones(3)))
B = torch.ones(2, 4)
print(torch.mm(A, B), A @ B)
u = torch.tensor([3.0, -4.0])
print(torch.norm(u), torch.abs(u).sum(), torch.norm(torch.ones((4, 9))))
print(torch.linalg.norm(u), torch.linalg.vector_norm(u, ord=1))
print(torch.trace(torch.arange(9.0).reshape(3, 3)), torch.diag(torch.tensor([1.0, 2.0])))
print(torch.outer(u, torch.tensor([1.0, 0.0, 2.0])))
print(torch.einsum("ij,jk->ik", A, B))
"""

TENSOR_TOUR = """
import torch

x = torch.arange(1, 13).reshape(3, 4)
print(x.flip(0), x.flip(1), torch.fliplr(x), sep="\\n")
print(torch.roll(x, 1, 1), x.roll(-1, 0), torch.rot90(x), sep="\\n")
print(torch.tril(x), x.triu(1), sep="\\n")
print(torch.diag(x), x.diagonal(1), torch.diag(torch.tensor([1, 2, 3])), sep="\\n")
print(torch.eye(2, 3), torch.eye(3, dtype=torch.long))
m = x > 6
print(torch.nonzero(m), torch.nonzero(m, as_tuple=True), torch.argwhere(x % 5 == 0))
print(torch.masked_select(x, m), x[m])
x[m] = 0
print(x)
print(x.index_select(1, torch.tensor([0, 3])), torch.take_along_dim(x, torch.tensor([[3], [2], [1]]), 1))
print(x.repeat_interleave(2, dim=0).shape, torch.repeat_interleave(torch.tensor([1, 2]), 3))
print(x.unflatten(1, (2, 2)).shape, torch.movedim(x.unflatten(1, (2, 2)), 0, -1).shape)
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print(gx, gy, sep="\\n")
print(torch.diag_embed(torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
"""

SCATTER_AND_GATHER = """
import torch

src = torch.arange(1, 11).reshape((2, 5))
index = torch.tensor([[0, 1, 2, 0]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src))
index = torch.tensor([[0, 1, 2], [0, 1, 4]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_(1, index, src))
print(torch.full((2, 4), 2.0).scatter_(1, torch.tensor([[2], [3]]), 1.23))
counts = torch.zeros(4).scatter_add(0, torch.tensor([0, 1, 1, 3, 3, 3]), torch.ones(6))
print(counts)
x = torch.tensor([5.0, 1.0, 7.0, 2.0, 8.0, 3.0])
group = torch.tensor([0, 1, 0, 1, 2, 2])
for how in ["sum", "mean", "amax", "amin"]:
    print(how, torch.zeros(3).scatter_reduce(0, group, x, reduce=how, include_self=False))
acc = torch.zeros(3, 2)
acc.index_add_(0, torch.tensor([0, 2, 0]), torch.ones(3, 2))
print(acc)
w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
picked = torch.gather(w, 1, torch.tensor([[1], [0]]))
scattered = torch.zeros(2, 3).scatter(1, torch.tensor([[2], [0]]), picked)
(scattered * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
print(picked.detach(), scattered.detach(), w.grad, sep="\\n")
"""

SORT_AND_COUNT = """
import torch

x = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
values, indices = torch.sort(x)
print(values, indices)
print(x.sort(descending=True, stable=True))
print(torch.argsort(x, stable=True), x.topk(3))
print(torch.unique(x), torch.unique(x, return_counts=True))
print(x.kthvalue(3), x.median(), torch.median(x.reshape(2, 4), dim=1))
print(torch.tensor([1, 2, 2, 3, 3, 3, 1]).mode())
print(torch.cumsum(x, 0), torch.cumprod(torch.tensor([1.0, 2.0, 0.5, 4.0]), 0))
print(torch.histc(x, bins=4, min=0, max=10))
print(torch.bincount(torch.tensor([0, 2, 2, 5])))
edges = torch.tensor([0.0, 2.5, 5.0, 7.5])
print(torch.bucketize(x, edges), torch.searchsorted(edges, torch.tensor([2.5, 8.0]), right=True))
print(torch.count_nonzero(torch.tensor([[0, 1, 2], [0, 0, 3]]), dim=1))
print(torch.logsumexp(x, 0), torch.var_mean(x), torch.std_mean(x, unbiased=False))
x = torch.tensor([2.0, 3.0, 0.5], requires_grad=True)
x.cumprod(0).sum().backward()
print(x.grad)
"""

MAKEMORE_BIGRAM = """
import torch

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila"]
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)
N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        N[stoi[ch1], stoi[ch2]] += 1
print(V, N.sum().item(), N[0].tolist()[:6])
p = N[0].float()
p = p / p.sum()
print(f"{p.max().item():.4f}", itos[p.argmax().item()])
g = torch.Generator().manual_seed(2147483647)
ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
print(0 <= ix < V, p[ix].item() > 0)
P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P.shape, torch.allclose(P.sum(1), torch.ones(V)))
log_likelihood = 0.0
n = 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        prob = P[stoi[ch1], stoi[ch2]]
        log_likelihood += torch.log(prob)
        n += 1
nll = -log_likelihood
print(f"{nll.item() / n:.4f}")
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs, ys = torch.tensor(xs), torch.tensor(ys)
import torch.nn.functional as F
xenc = F.one_hot(xs, num_classes=V).float()
W = torch.randn((V, V), generator=g, requires_grad=True)
for k in range(30):
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(len(xs)), ys].log().mean() + 0.01 * (W ** 2).mean()
    if k == 0:
        first = loss.item()
    W.grad = None
    loss.backward()
    W.data += -10 * W.grad
print(xenc.shape, xenc.dtype, loss.item() < first)
out = []
ix = 0
while True:
    p = P[ix]
    ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
    if ix == 0:
        break
    out.append(itos[ix])
print(all(c in chars for c in out))
"""

MAKEMORE_MLP = """
import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila"]
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
block_size = 3
X, Y = [], []
for w in words:
    context = [0] * block_size
    for ch in w + ".":
        ix = stoi[ch]
        X.append(context)
        Y.append(ix)
        context = context[1:] + [ix]
X, Y = torch.tensor(X), torch.tensor(Y)
print(X.shape, X.dtype, Y.shape, Y.dtype)
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((27, 2), generator=g)
W1 = torch.randn((6, 50), generator=g)
b1 = torch.randn(50, generator=g)
W2 = torch.randn((50, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True
emb = C[X]
print(emb.shape, emb.view(-1, 6).shape, torch.cat(torch.unbind(emb, 1), 1).shape)
losses = []
for i in range(60):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    emb = C[X[ix]]
    h = torch.tanh(emb.view(-1, 6) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Y[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
    losses.append(loss.item())
emb = C[X]
h = torch.tanh(emb.view(-1, 6) @ W1 + b1)
full = F.cross_entropy(h @ W2 + b2, Y)
print(full.item() < 4.0, sum(losses[-10:]) < sum(losses[:10]))
lri = torch.linspace(-3, 0, 5)
print(10 ** lri)
counts = torch.bincount(Y, minlength=27)
print(counts[:5], counts.sum().item(), (counts > 0).sum().item())
"""

D2L_PARAMETER_MANAGEMENT = """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X = torch.rand(size=(2, 4))
print(net(X).shape)
print(*[(name, param.shape) for name, param in net[0].named_parameters()])
print(*[(name, param.shape) for name, param in net.named_parameters()])
print(type(net[2].bias).__name__, net[2].bias.data.shape, net[2].weight.grad is None)


def init_constant(m):
    if type(m) == nn.Linear:
        nn.init.constant_(m.weight, 1)
        nn.init.zeros_(m.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])
shared = nn.Linear(8, 8)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(), nn.Linear(8, 1))
net(X)
print(net[2].weight.data[0, 0] == net[4].weight.data[0, 0])
net[2].weight.data[0, 0] = 100
print(net[2].weight.data[0, 0] == net[4].weight.data[0, 0])


class CenteredLayer(nn.Module):
    def forward(self, X):
        return X - X.mean()


layer = CenteredLayer()
print(layer(torch.tensor([1.0, 2, 3, 4, 5])))


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(in_units, units) * 0.5)
        self.bias = nn.Parameter(torch.arange(units, dtype=torch.float32))

    def forward(self, X):
        return torch.relu(torch.matmul(X, self.weight.data) + self.bias.data)


linear = MyLinear(5, 3)
print(linear.weight.shape, linear(torch.ones(2, 5)))
print(sum(p.numel() for p in linear.parameters()))
"""

D2L_CONV_BY_HAND = """
import torch
from torch import nn


def corr2d(X, K):
    h, w = K.shape
    Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


X = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
K = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
print(corr2d(X, K))
X = torch.ones((6, 8))
X[:, 2:6] = 0
K = torch.tensor([[1.0, -1.0]])
Y = corr2d(X, K)
print(Y)
print(corr2d(X.t(), K))
conv2d = nn.Conv2d(1, 1, kernel_size=(1, 2), bias=False)
with torch.no_grad():
    conv2d.weight.copy_(torch.tensor([[[[0.3, 0.2]]]]))
X = X.reshape((1, 1, 6, 8))
Y = Y.reshape((1, 1, 6, 7))
lr = 3e-2
for i in range(10):
    Y_hat = conv2d(X)
    l = (Y_hat - Y) ** 2
    conv2d.zero_grad()
    l.sum().backward()
    conv2d.weight.data[:] -= lr * conv2d.weight.grad
    if (i + 1) % 2 == 0:
        print(f"epoch {i + 1}, loss {l.sum():.3f}")
print(conv2d.weight.data.reshape((1, 2)))


def corr2d_multi_in(X, K):
    return sum(corr2d(x, k) for x, k in zip(X, K))


X = torch.tensor([[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
                  [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
K = torch.tensor([[[0.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]])
print(corr2d_multi_in(X, K))
K = torch.stack((K, K + 1, K + 2), 0)
print(K.shape)
print(torch.stack([corr2d_multi_in(X, k) for k in K], 0))
"""

D2L_POOLING = """
import torch
from torch import nn


def pool2d(X, pool_size, mode="max"):
    p_h, p_w = pool_size
    Y = torch.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            if mode == "max":
                Y[i, j] = X[i: i + p_h, j: j + p_w].max()
            elif mode == "avg":
                Y[i, j] = X[i: i + p_h, j: j + p_w].mean()
    return Y


X = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
print(pool2d(X, (2, 2)), pool2d(X, (2, 2), "avg"), sep="\\n")
X = torch.arange(16, dtype=torch.float32).reshape((1, 1, 4, 4))
print(nn.MaxPool2d(3)(X))
print(nn.MaxPool2d(3, padding=1, stride=2)(X))
print(nn.MaxPool2d((2, 3), stride=(2, 3), padding=(0, 1))(X))
X = torch.cat((X, X + 1), 1)
print(nn.MaxPool2d(3, padding=1, stride=2)(X))
print(nn.AvgPool2d(2)(X))
"""

KNN_CDIST = """
import torch

train = torch.tensor([[0.0, 0.0], [0.2, 0.1], [1.0, 1.0], [0.9, 1.2], [2.0, 0.0], [2.1, 0.3]])
labels = torch.tensor([0, 0, 1, 1, 2, 2])
query = torch.tensor([[0.1, 0.0], [1.0, 0.9], [1.9, 0.2], [1.0, 0.5]])
d = torch.cdist(query, train)
print(d.round(decimals=3))
nearest = d.topk(3, largest=False)
print(nearest.indices)
votes = labels[nearest.indices]
print(votes, votes.mode(dim=1).values)
print(torch.cdist(query, train, p=1).argmin(1))
sim = torch.nn.functional.cosine_similarity(query[:, None, :], train[None, :, :] + 0.1, dim=-1)
print(sim.argmax(1))
print(torch.nn.functional.normalize(query, dim=1).norm(dim=1))
pts = torch.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
torch.cdist(pts, pts).sum().backward()
print(pts.grad)
"""

EINSUM_ATTENTION = """
import torch
import torch.nn.functional as F

T, C = 4, 3
x = torch.arange(T * C, dtype=torch.float32).reshape(1, T, C) / 10
Wq = torch.eye(C) * 0.5
Wk = torch.ones(C, C) * 0.1
Wv = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
q = torch.einsum("btc,cd->btd", x, Wq)
k = torch.einsum("btc,cd->btd", x, Wk)
v = x @ Wv
att = torch.einsum("bqd,bkd->bqk", q, k) / C ** 0.5
tril = torch.tril(torch.ones(T, T))
att = att.masked_fill(tril == 0, float("-inf"))
att = F.softmax(att, dim=-1)
print(att[0].round(decimals=4))
out = torch.einsum("bqk,bkd->bqd", att, v)
print(out.shape, out[0, -1])
print(torch.einsum("ii->", torch.eye(3)), torch.einsum("i,j->ij", torch.arange(2.0), torch.arange(3.0)))
print(torch.tensordot(torch.ones(2, 3, 4), torch.ones(4, 5), dims=1).shape)
print(torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
torch.einsum("ij,jk->", a, a).backward()
print(a.grad)
"""

MICROGRAD_OPS = """
import torch

x = torch.tensor([-4.0, 2.5, 7.2], dtype=torch.double, requires_grad=True)
y = torch.tensor([1.5, -2.0, 3.0], dtype=torch.double, requires_grad=True)
z = (x % y) * 2 + torch.fmod(x, y) + x.frac() - torch.lerp(x, y, 0.25)
w = torch.addcmul(z, x, y, value=0.5) + torch.addcdiv(z, x, y)
q = torch.clamp(w, min=y * -1, max=y * 4) + x.sign() * x.abs().trunc()
q.sum().backward()
print(q.detach(), x.grad, y.grad, sep="\\n")
a = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.double, requires_grad=True)
b = a.cumsum(0) * a.cumprod(0).flip(0) + a.roll(1)
b.sum().backward()
print(b.detach(), a.grad, sep="\\n")
print(torch.autograd.gradcheck(lambda t: (t.cumprod(0) * t.flip(0)).sum(), (a,)))
"""

BITWISE_MASKS = """
import torch

flags = torch.tensor([0b1010, 0b0110, 0b1111, 0b0001])
print(flags & 0b0010, flags | 0b1000, flags ^ 0b1111, ~flags)
print(torch.bitwise_and(flags, 3), torch.bitwise_xor(flags, flags.roll(1)))
a = torch.tensor([True, False, True, False])
b = torch.tensor([True, True, False, False])
print(a & b, a | b, a ^ b, ~a)
print(torch.logical_and(flags > 2, a), torch.logical_or(flags, a), torch.logical_not(flags - 1))
print(torch.logical_xor(a, b).sum().item())
x = torch.linspace(-1, 1, 5)
mask = (x > -0.6) & (x < 0.6)
print(x[mask], x.masked_fill(~mask, 0))
"""

GRAD_CHECKS_FAMILY = """
import torch

torch.manual_seed(0)
x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 0.0, -0.5]], dtype=torch.double, requires_grad=True)
checks = {
    "flip": lambda t: t.flip(1),
    "diag": lambda t: torch.diag(t[:, :2]),
    "diagonal": lambda t: t.diagonal(1),
    "index_select": lambda t: t.index_select(1, torch.tensor([2, 0, 2])),
    "take_along_dim": lambda t: torch.take_along_dim(t, torch.tensor([[1], [2]]), 1),
    "repeat_interleave": lambda t: t.repeat_interleave(2, dim=1),
    "masked_select": lambda t: t.masked_select(torch.tensor([[True, False, True], [False, True, True]])),
    "logsumexp": lambda t: t.logsumexp(1),
    "median": lambda t: t.median(dim=1).values,
    "kthvalue": lambda t: t.kthvalue(2, 1).values,
    "vector_norm": lambda t: torch.linalg.vector_norm(t, 3, 1),
    "outer": lambda t: torch.outer(t[0], t[1]),
    "einsum": lambda t: torch.einsum("ij,kj->ik", t, t),
    "var_mean": lambda t: torch.var_mean(t, 1)[0],
}
for name, fn in checks.items():
    print(name, torch.autograd.gradcheck(fn, (x,)))
"""

PROMOTION_FLOAT32 = """
import torch

x = torch.arange(6)
print((x / 2).dtype, (x * 0.5).dtype, (x + 1).dtype, (0.5 ** x).dtype)
print(x / 4, x * 0.5)
w = torch.ones(3, requires_grad=True)
y = (torch.arange(3) * w * 2.5).sum()
y.backward()
print(y.item(), w.grad, w.grad.dtype)
print(torch.arange(4, dtype=torch.int32) + torch.tensor(2.5), torch.arange(3) < 1.5)
print((torch.tensor([True, False]) + True).dtype, torch.tensor([1, 2]) * True)
print(torch.arange(4, dtype=torch.int32) * 3, (torch.arange(3) + torch.ones(3)).dtype)
"""

SEGMENTS_REPEAT_INTERLEAVE = """
import torch

lengths = torch.tensor([2, 0, 3, 1])
seg = torch.repeat_interleave(lengths)  # the segment of each element
print(seg)
vals = torch.arange(6, dtype=torch.float32)
sums = torch.zeros(4).index_add_(0, seg, vals)
print(sums, sums / lengths.clamp(min=1))
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x.repeat_interleave(torch.tensor([1, 3]), dim=0, output_size=4)
print(y.shape, y.detach())
(y * torch.arange(8.0).reshape(4, 2)).sum().backward()
print(x.grad)
print(x.detach().repeat_interleave(2), torch.tensor([7, 8]).repeat_interleave(torch.tensor(3)))
"""

PRINT_SCALES = """
import torch

print(torch.tensor([1e-5, 1.0, 1e3]))
print(torch.tensor([123456789.0, 1.0]), torch.tensor([0.1, float("nan"), float("inf")]))
print(torch.softmax(torch.tensor([[10.0, 0.0, -10.0]]), dim=1))
print(torch.zeros(0, 3), torch.tensor([], dtype=torch.long), torch.tensor([0.0, -0.0]))
print(torch.arange(1200.0).reshape(40, 30))
print(torch.tensor([[1, -200], [3, 4]]), torch.tensor([[True], [False]]))
"""

PROGRAMS_OPS = {
    "labels_and_batches": LABELS_AND_BATCHES,
    "d2l_data_manipulation": D2L_DATA_MANIPULATION,
    "d2l_linear_algebra": D2L_LINEAR_ALGEBRA,
    "tensor_tour": TENSOR_TOUR,
    "scatter_and_gather": SCATTER_AND_GATHER,
    "sort_and_count": SORT_AND_COUNT,
    "makemore_bigram": MAKEMORE_BIGRAM,
    "makemore_mlp": MAKEMORE_MLP,
    "d2l_parameter_management": D2L_PARAMETER_MANAGEMENT,
    "d2l_conv_by_hand": D2L_CONV_BY_HAND,
    "d2l_pooling": D2L_POOLING,
    "knn_cdist": KNN_CDIST,
    "einsum_attention": EINSUM_ATTENTION,
    "micrograd_ops": MICROGRAD_OPS,
    "bitwise_masks": BITWISE_MASKS,
    "grad_checks_family": GRAD_CHECKS_FAMILY,
    "promotion_float32": PROMOTION_FLOAT32,
    "segments_repeat_interleave": SEGMENTS_REPEAT_INTERLEAVE,
    "print_scales": PRINT_SCALES,
}
