"""The decision scorer: the encoder's top two layers, fine-tuned, as an interaction model over its token states.

The encoder (multilingual-e5-small, frozen) reads the state, the question and every option (a choice option, a
score level, a yes or a no side) once, each as its own sequence, and hands over each text's token states after
layers 10, 11 and 12 (3 x 384 wide). The scorer holds trainable copies of layers 11 and 12, started from the
pretrained weights. In each, the question's tokens attend to the state's frozen states at that depth and to
themselves; each option's tokens attend to the state, the question and themselves: an option never sees another
option, so option order cannot change any number. The state is never re-read per question: its keys and values
come from the frozen encoder's own states, projected once per request (state_kv) for all questions and options. A learned
per-head offset on the logits of the state's (and, for options, the question's) keys starts the copies close to
the encoder reading each text alone. An option's score is an MLP of its pooled tokens, the pooled question, their
products with the pooled state and question, a learned bilinear match of the encoder's sentence vectors, and the
plain cosines of those vectors (e5's own zero-shot similarity).
"""
import math
import os

import torch
from torch import nn

H_IN = 384
TYPES = {"noul": 0, "choice": 1, "score": 2}


class Attn(nn.Module):
    """Attention of grouped tokens x [B, G, L, d] (G options of one question, or G = 1 for the question) to keys
    shared by every group of a batch row (the state, the question) and to the group's own tokens. The shared keys
    and values are projected once per row, not once per group. Each shared source carries a learned per-head
    offset on its logits."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.hd = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def heads(self, x):
        """[B, G, L, d] -> [B, h, G, L, hd]"""
        B, G, L, _ = x.shape
        return x.view(B, G, L, self.h, self.hd).permute(0, 3, 1, 2, 4)

    def kv(self, src):
        """Keys and values of shared tokens [B, Lk, d], side by side: [B, Lk, 2d]."""
        return torch.cat([self.k(src), self.v(src)], -1)

    def forward(self, x, xbias, shared):
        """x [B, G, L, d]; xbias [B, G, L] additive mask of x; shared: list of (keys and values [B, Lk, 2d] (kv()),
        additive mask [B, Lk], per-head offset [h]), concatenated along length before the group's own tokens."""
        B, G, L, d = x.shape
        h, hd = self.h, self.hd
        kv = torch.cat([s for s, _, _ in shared], 1)
        sbias = torch.cat([m[:, None, :] + g[None, :, None] for _, m, g in shared], 2)  # [B, h, Lk]
        Lk = kv.shape[1]
        ks = kv[..., :d].reshape(B, Lk, h, hd).transpose(1, 2)  # [B, h, Lk, hd]
        vs = kv[..., d:].reshape(B, Lk, h, hd).transpose(1, 2)
        q = self.heads(self.q(x)) / math.sqrt(hd)  # [B, h, G, L, hd]
        ls = (q.reshape(B, h, G * L, hd) @ ks.transpose(-1, -2)).view(B, h, G, L, Lk) + sbias[:, :, None, None, :]
        lo = q @ self.heads(self.k(x)).transpose(-1, -2) + xbias[:, None, :, None, :]  # [B, h, G, L, L]
        a = torch.softmax(torch.cat([ls, lo], -1), -1)
        out = (a[..., :Lk].reshape(B, h, G * L, Lk) @ vs).view(B, h, G, L, hd) + a[..., Lk:] @ self.heads(self.v(x))
        return self.o(out.permute(0, 2, 3, 1, 4).reshape(B, G, L, d))


class Block(nn.Module):
    """One post-LN encoder layer (as e5's), its attention reaching shared keys (Attn)."""

    def __init__(self, d, heads, ff, eps=1e-12):
        super().__init__()
        self.attn = Attn(d, heads)
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=eps), nn.LayerNorm(d, eps=eps)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        self.gate_state = nn.Parameter(torch.full((heads,), -2.0))  # logit offset of the state's keys
        self.gate_question = nn.Parameter(torch.full((heads,), -2.0))  # of the question's keys, for options

    def forward(self, x, xbias, shared):
        x = self.ln1(x + self.attn(x, xbias, shared))
        return self.ln2(x + self.ff(x))

    def load_e5(self, layer):
        """Start from a pretrained e5_torch.Layer."""
        with torch.no_grad():
            for mine, theirs in ((self.attn.q, layer.q), (self.attn.k, layer.k), (self.attn.v, layer.v), (self.attn.o, layer.ao),
                                 (self.ff[0], layer.fi), (self.ff[2], layer.fo), (self.ln1, layer.aln), (self.ln2, layer.oln)):
                mine.weight.copy_(theirs.weight)
                mine.bias.copy_(theirs.bias)


def neg_mask(m):
    return (1.0 - m.float()) * -1e4


def depth(x, i):
    """The token states after encoder layer 10 + i, out of the three handed over side by side."""
    return x[..., i * H_IN : (i + 1) * H_IN]


class Scorer(nn.Module):
    """Its shape is e5-small's (width 384, 12 heads, feed-forward 1536): the two blocks are its layers 11 and 12."""

    def __init__(self):
        super().__init__()
        d = H_IN
        self.proj = nn.Linear(H_IN, d)
        self.role = nn.Parameter(torch.zeros(2, d))  # question, option
        self.qtype = nn.Parameter(torch.zeros(3, d))
        self.blocks = nn.ModuleList(Block(d, 12, 1536) for _ in range(2))
        self.head = nn.Sequential(nn.Linear(5 * d + 2, d), nn.GELU(), nn.Linear(d, 1))
        # the cumulative-link reading of a scale (see ordinal()): its spread, and how much that grows with the
        # variance of the level softmax (0: a fixed spread)
        self.log_spread = nn.Parameter(torch.tensor(math.log(0.5)))
        self.var_coef = nn.Parameter(torch.tensor(0.0))

    def read_scale(self, scores, valid):
        """Log-probabilities of a scale's levels from their raw scores (ordinal() with this model's spread)."""
        return ordinal(scores, valid, self.log_spread.exp(), self.var_coef.clamp(min=0.0))

    def state_kv(self, S):
        """The state's keys and values in both layers, from its frozen states after layers 10 and 11: [B, Ls, 4 x 384].
        They depend on the state alone, so the engine computes them once per request (onnx/state.onnx), not per
        question; a token's row depends on that token alone, so a state cut shorter for a question is a prefix."""
        return torch.cat([blk.attn.kv(depth(S, i)) for i, blk in enumerate(self.blocks)], -1)

    def forward(self, S, smask, Q, qmask, O, omask, t, skv=None):
        """S [B,Ls,3x384] smask [B,Ls]; Q [B,Lq,3x384] qmask; O [B,N,Lo,3x384] omask [B,N,Lo]; t [B] question type;
        skv: state_kv(S) when computed already. Token states side by side after encoder layers 10, 11, 12.
        Returns raw option scores [B, N]."""
        B, N, Lo, _ = O.shape
        te = self.qtype[t]  # [B, d]
        mean = lambda x, m: (x * m.unsqueeze(-1).float()).sum(-2) / m.unsqueeze(-1).float().sum(-2).clamp(min=1.0)
        # e5's own sentence vectors (mean-pooled final states): their cosines are the zero-shot baseline
        vs, vq, vo = mean(depth(S, 2), smask), mean(depth(Q, 2), qmask), mean(depth(O, 2), omask)  # [B,H], [B,H], [B,N,H]
        unit = lambda v: v / v.norm(dim=-1, keepdim=True).clamp(min=1e-6)
        cos_s = (unit(vo) * unit(vs)[:, None, :]).sum(-1, keepdim=True).reshape(B * N, 1)
        cos_q = (unit(vo) * unit(vq)[:, None, :]).sum(-1, keepdim=True).reshape(B * N, 1)
        bil = (self.proj(vo) * self.proj(vs)[:, None, :]).reshape(B * N, -1)
        q = (depth(Q, 0) + self.role[0] + te[:, None, :])[:, None]  # [B, 1, Lq, d]
        o = depth(O, 0) + self.role[1] + te[:, None, None, :]  # [B, N, Lo, d]
        sm, qm, om = neg_mask(smask), neg_mask(qmask), neg_mask(omask)
        skv = self.state_kv(S) if skv is None else skv
        for i, blk in enumerate(self.blocks):
            s = skv[..., i * 2 * H_IN : (i + 1) * 2 * H_IN]  # the state's keys and values in this layer
            q_next = blk(q, qm[:, None], [(s, sm, blk.gate_state)])
            o = blk(o, om, [(s, sm, blk.gate_state), (blk.attn.kv(q[:, 0]), qm, blk.gate_question)])
            q = q_next
        q = q[:, 0]
        o = o.reshape(B * N, Lo, -1)
        rep = lambda x: x.unsqueeze(1).expand(B, N, *x.shape[1:]).reshape(B * N, *x.shape[1:])
        ow = omask.reshape(B * N, Lo, 1).float()
        po = (o * ow).sum(1) / ow.sum(1).clamp(min=1.0)
        pq = rep(mean(q, qmask))
        ps = rep(vs)
        return self.head(torch.cat([po, pq, po * ps, po * pq, bil, 10 * cos_s, 10 * cos_q], -1)).reshape(B, N)


def ordinal(scores, valid, spread, var_coef=0.0):
    """Cumulative-link reading of a scale's level scores: a position z = sum_i p_i * i with p = softmax(scores), its
    variance v = sum_i p_i * (i - z)^2, then P(level <= k) = sigmoid((k + 0.5 - z) / s), s = sqrt(spread^2 +
    var_coef * v). A clear extreme puts z at an end of the scale, a mixed text in the middle; a peaked softmax
    reads as a sure answer, also on an inner level, a spread-out one as an unsure one; the distribution is always
    unimodal. scores/valid [B, N]; returns log-probabilities [B, N]."""
    B, N = scores.shape
    p = torch.softmax(scores.masked_fill(~valid, -1e4), -1)
    idx = torch.arange(N, dtype=scores.dtype, device=scores.device)
    z = (p * idx).sum(-1, keepdim=True)
    s = torch.sqrt(spread**2 + var_coef * (p * (idx - z) ** 2).sum(-1, keepdim=True))
    n = valid.sum(-1, keepdim=True)
    cut = torch.sigmoid((idx + 0.5 - z) / s)  # P(level <= k)
    cut = torch.where(idx[None, :] >= n - 1, torch.ones_like(cut), cut)
    prev = torch.cat([torch.zeros(B, 1, dtype=scores.dtype, device=scores.device), cut[:, :-1]], -1)
    probs = (cut - prev).clamp(min=1e-6)
    return torch.log(probs).masked_fill(~valid, -1e4)


class _Served(nn.Module):
    """The served scorer: one question, its options as [n, lo, 3 x 384], the state's keys and values from _ServedState;
    returns the options' raw scores [n]."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, state, state_kv, state_mask, question, question_mask, options, options_mask, qtype):
        return self.m(state, state_mask, question, question_mask, options.unsqueeze(0), options_mask.unsqueeze(0), qtype, skv=state_kv)[0]


class _ServedState(nn.Module):
    """The served state graph: the state's keys and values in both layers, once per request."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, state):
        return self.m.state_kv(state)


def export_onnx(model, onnx_dir):
    """Write onnx/scorer.onnx and onnx/state.onnx as the engine loads them (src/engine/decider/worker.ts feeds these inputs)."""
    os.makedirs(onnx_dir, exist_ok=True)
    model = model.eval()
    S = torch.randn(1, 7, 3 * H_IN)
    skv = model.state_kv(S).detach()
    ex = (S, skv, torch.ones(1, 7, dtype=torch.long), torch.randn(1, 5, 3 * H_IN), torch.ones(1, 5, dtype=torch.long),
          torch.randn(3, 4, 3 * H_IN), torch.ones(3, 4, dtype=torch.long), torch.tensor([1]))
    torch.onnx.export(_Served(model), ex, os.path.join(onnx_dir, "scorer.onnx"),
                      input_names=["state", "state_kv", "state_mask", "question", "question_mask", "options", "options_mask", "qtype"],
                      output_names=["scores"],
                      dynamic_axes={"state": {1: "ls"}, "state_kv": {1: "ls"}, "state_mask": {1: "ls"}, "question": {1: "lq"},
                                    "question_mask": {1: "lq"}, "options": {0: "n", 1: "lo"}, "options_mask": {0: "n", 1: "lo"},
                                    "scores": {0: "n"}},
                      opset_version=17, dynamo=False)
    torch.onnx.export(_ServedState(model), (S,), os.path.join(onnx_dir, "state.onnx"), input_names=["state"], output_names=["state_kv"],
                      dynamic_axes={"state": {1: "ls"}, "state_kv": {1: "ls"}}, opset_version=17, dynamo=False)
