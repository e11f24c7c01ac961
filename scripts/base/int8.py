"""Integer matrix products for the served ONNX graphs (the encoder, built by build_base.py; the scorer and state
graphs, rewritten after export by scripts/train/quantize_scorer.py).

x @ w becomes: x's tokens as 8-bit codes, each token over its own scale (quantize; GELU outputs shifted into 0..255,
quantize_gelu; one QuantizeLinear over blocks of a whole row, codes), w as 7-bit codes per output channel
(int8_codes, or rounded with error feedback, gptq_codes), their product in exact integer arithmetic (MatMulInteger), then back to float times both scales.
Before that, SmoothQuant-style per-channel factors (smoothing) move half of the activations' outlier channels into
the weights. Two properties follow:
- the integers are the same on every CPU (seven-bit weights keep every u8 x s8 pair sum within int16, so AVX2's
  saturating vpmaddubsw gives what AVX-512 VNNI gives), and the float steps around them are elementwise;
- a token's codes depend on that token alone, so a text's numbers never depend on what runs beside it.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

GELU_MIN = -0.1700  # the least value GELU takes (at x = -0.75)


class Graph:
    """Nodes and initializers in the order they are added."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op, ins, outs, domain=None, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, domain=domain, **attrs))
        return outs[0]


def int8_codes(w):
    """A float matrix [nin, nout] as int8 codes per output channel over a scale of max|w| / 63 (codes in -63..63).
    Returns (codes [nin, nout], scales [nout])."""
    s = np.abs(w).max(0) / 63.0
    s[s == 0] = 1.0
    return np.clip(np.round(w / s), -63, 63).astype(np.int8), s.astype(np.float32)


def gptq_codes(w, moments, damp=0.01):
    """int8_codes' codes and scales, the codes rounded with error feedback (GPTQ) instead of each to its nearest: the
    input channels are rounded one at a time, in order of falling input energy, and each one's rounding error is
    spread over the channels not yet rounded through the Cholesky factor of the inverse of the inputs' second-moment
    matrix (1% of its mean diagonal added), so that the product changes least on inputs like the calibration's.
    w [nin, nout] float; moments [nin, nin]: the sum of x x^T over the calibration's inputs of this product."""
    w = w.astype(np.float64).copy()
    s = np.abs(w).max(0) / 63.0
    s[s == 0] = 1.0
    h = moments.astype(np.float64).copy()
    dead = np.diag(h) == 0  # a channel no calibration input used: its weights cannot matter there
    h[dead, dead] = 1.0
    w[dead] = 0.0
    order = np.argsort(-np.diag(h), kind="stable")
    h, w = h[order][:, order], w[order]
    h[np.diag_indices_from(h)] += damp * np.mean(np.diag(h))
    u = np.linalg.cholesky(np.linalg.inv(h)).T  # upper triangular: inv(h) = u^T u
    codes = np.empty(w.shape, np.int8)
    for i in range(w.shape[0]):
        c = np.clip(np.round(w[i] / s), -63, 63)
        codes[i] = c
        w[i + 1:] -= np.outer(u[i, i + 1:], (w[i] - c * s) / u[i, i])
    out = np.empty_like(codes)
    out[order] = codes
    return out, s.astype(np.float32)


def weight_codes(w, moments=None, smooth=None):
    """The codes and scales of a matrix whose rows were multiplied by smooth (or None): int8_codes, or with the
    second moments of its unsmoothed inputs gptq_codes (the smoothed inputs' moments are these over smooth twice)."""
    if moments is None:
        return int8_codes(w)
    return gptq_codes(w, moments if smooth is None else moments / np.outer(smooth, smooth))


def smoothing(amax, w):
    """Per input channel factors that move half of the activations' outliers into the weights (SmoothQuant, alpha
    0.5): the input is divided by them, the matrix's rows multiplied. amax [nin]: the largest |input| per channel
    seen in calibration; w [nin, nout] float."""
    wmax = np.abs(w).max(1)
    return np.sqrt(np.maximum(amax, 1e-5) / np.maximum(wmax, 1e-5)).astype(np.float32)


class Int8:
    """The integer products of one graph: its shared constants are added once, when this is made."""

    def __init__(self, g, prefix=""):
        self.g, self.p = g, prefix
        c = lambda name, v: g.init(prefix + name, v)
        c("axis_last", np.array([-1], np.int64))
        c("inv127", np.array(1.0 / 127.0, np.float32))
        c("tiny", np.array(1e-12, np.float32))
        c("zp128", np.array(128, np.uint8))
        c("zp0", np.array(0, np.uint8))
        c("gelu_min", np.array(GELU_MIN, np.float32))
        c("inv255", np.array(1.0 / 255.0, np.float32))

    def codes(self, x, s, width, zp, out):
        """x [..., width] as uint8 codes round(x / s) + zp over its rows' scales s [..., 1] (zp: "zp128" or "zp0"): one
        QuantizeLinear (opset 21) whose blocks are whole rows, its zero point expanded to the scales' shape. Its
        integers are those of Div, Round (half to even), Clip and Cast, which it replaced: the same division and
        rounding in one pass; the saturation never acts, as |x / s| <= 127 (checked bit for bit on the served graphs,
        rewrite_codes.py)."""
        node = self.g.node
        zps = node("Expand", [self.p + zp, node("Shape", [s], [out + ".sshape"])], [out + ".zp"])
        return node("QuantizeLinear", [x, s, zps], [out + ".u8"], axis=-1, block_size=width)

    def quantize(self, x, width, out):
        """Per-token symmetric 8-bit codes of x [..., width]: each row over max|row| / 127, rounded, shifted by 128 into
        uint8 (zero point 128). Returns (codes, row scales [..., 1])."""
        node, p = self.g.node, self.p
        amax = node("ReduceMax", [node("Abs", [x], [out + ".abs"]), p + "axis_last"], [out + ".amax"], keepdims=1)
        s = node("Max", [node("Mul", [amax, p + "inv127"], [out + ".s0"]), p + "tiny"], [out + ".s"])
        return self.codes(x, s, width, "zp128", out), s

    def quantize_gelu(self, x, width, out, smooth=None):
        """GELU outputs (never below GELU_MIN): x - GELU_MIN over max / 255 per token fills 0..255 with zero point 0
        (twice the resolution of a symmetric code); the shift comes back through the bias (see product). smooth: per
        channel factors m the shifted input is divided by (the matrix's rows are multiplied by them), or None."""
        node, p = self.g.node, self.p
        xp = node("Sub", [x, p + "gelu_min"], [out + ".p"])
        if smooth is not None:
            xp = node("Mul", [xp, self.g.init(out + ".smooth", (1.0 / smooth).astype(np.float32))], [out + ".sm"])
        amax = node("ReduceMax", [xp, p + "axis_last"], [out + ".amax"], keepdims=1)
        s = node("Max", [node("Mul", [amax, p + "inv255"], [out + ".s0"]), p + "tiny"], [out + ".s"])
        return self.codes(xp, s, width, "zp0", out), s

    def product(self, xq, xs, codes, scales, bias, out, gelu=False, result=None, smooth=None):
        """xq (uint8 codes) x codes (int8) in integers, back to float times the rows' and channels' scales, plus
        bias (None: no bias and no shift added). result: the output's name (default out + ".y"). smooth: the factors
        a shifted GELU input was divided by (its rows of codes carry them), or None."""
        node, init = self.g.node, self.g.init
        zp = self.p + ("zp0" if gelu else "zp128")
        y = node("Cast", [node("MatMulInteger", [xq, init(out + ".w8", codes), zp], [out + ".i32"])], [out + ".f"], to=TensorProto.FLOAT)
        last = result if result is not None and bias is None else out + ".ws_"
        y = node("Mul", [node("Mul", [y, xs], [out + ".r"]), init(out + ".ws", scales)], [last])
        if bias is None:
            assert not gelu, "a shifted input needs the bias that carries the shift back"
            return y
        if gelu:  # inputs quantized as x - GELU_MIN: add GELU_MIN x (the dequantized codes' column sums) back
            rows = codes.astype(np.float32) * scales
            bias = bias + GELU_MIN * (rows if smooth is None else rows / smooth[:, None]).sum(0)
        return node("Add", [y, init(out + ".b", bias.astype(np.float32))], [result or out + ".y"])

    def linear(self, x, w, bias, out, amax=None, gelu=False, key=None, result=None, moments=None):
        """x @ w (+ bias) in integers. amax: the calibration's largest |x| per input channel (smoothing; for a GELU
        input, of x - GELU_MIN, or None: not smoothed); key: the name prefix of x's codes (default out; names of its
        own beside out's); moments: the calibration's sum of x x^T (of x - GELU_MIN for a GELU input), the codes
        then rounded by gptq_codes, or None (each code the nearest)."""
        key = key or out
        if gelu:
            m = None if amax is None else smoothing(amax, w)
            return self.product(*self.quantize_gelu(x, w.shape[0], key, m), *weight_codes(w if m is None else w * m[:, None], moments, m),
                                bias, out, gelu=True, result=result, smooth=m)
        m = smoothing(amax, w)
        xq, xs = self.quantize(self.g.node("Mul", [x, self.g.init(key + ".smooth", (1.0 / m).astype(np.float32))], [key + ".sm"]), w.shape[0], key)
        return self.product(xq, xs, *weight_codes(w * m[:, None], moments, m), bias, out, result=result)


def dequantized(inits, out, key=None):
    """The float matrix [nin, nout] that Int8.linear wrote as product `out`, back from a graph's initializers (name ->
    array): its 7-bit codes times their channel scales, over the smoothing of its input `key` (None: an input
    not smoothed, as a GELU input is unless build_base.py --smooth-gelu)."""
    w = inits[out + ".w8"].astype(np.float32) * inits[out + ".ws"][None, :]
    return w if key is None else w * inits[key + ".smooth"][:, None]  # .smooth holds 1 / m; the rows were multiplied by m


def at21(model):
    """Convert a graph of an earlier default opset to opset 21 in place (onnx's version converter: ReduceMax's axes
    become an input, and so on), IR version 10."""
    from onnx import version_converter
    if next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < 21:
        model.CopyFrom(version_converter.convert_version(model, 21))
        model.ir_version = 10


def integer_products(model, feeds):
    """Rewrite an exported float graph in place: every MatMul whose matrix is a 2-D float initializer (directly or
    through an Identity) becomes an integer product, smoothed with the largest |input| per channel seen over feeds
    (a list of input dicts for onnxruntime); a MatMul that reads a GELU's output (an Erf among its three producers)
    takes the shifted code instead. Other nodes are kept as they are. A graph of an opset before 21 is converted to
    opset 21 first (the codes' QuantizeLinear needs it). Returns the rewritten MatMuls' names."""
    import onnx
    import onnxruntime as ort

    at21(model)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    through = {n.output[0]: n.input[0] for n in g.node if n.op_type == "Identity" and n.input[0] in inits}
    producer = {o: n for n in g.node for o in n.output}
    matrix = lambda n: inits.get(through.get(n.input[1], n.input[1]))
    targets = [n for n in g.node if n.op_type == "MatMul" and matrix(n) is not None and len(matrix(n).dims) == 2
               and matrix(n).data_type == onnx.TensorProto.FLOAT]

    def after_gelu(n):
        seen, frontier = [], [n.input[0]]
        for _ in range(3):
            frontier = [i for t in frontier if t in producer for i in producer[t].input]
            seen += [producer[t].op_type for t in frontier if t in producer]
        return "Erf" in seen

    # calibration: the inputs of every target, as extra outputs of a copy
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = sorted({n.input[0] for n in targets})
    for name in names:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
    amax = {}
    for f in feeds:
        for name, x in zip(names, sess.run(names, f)):
            r = np.abs(x.reshape(-1, x.shape[-1])).max(0)
            amax[name] = np.maximum(amax[name], r) if name in amax else r

    built = Graph()
    int8 = Int8(built, prefix="int8.")
    rewritten = set(n.name for n in targets)
    for i, n in enumerate(g.node):
        if n.name not in rewritten:
            built.nodes.append(n)
            continue
        w = numpy_helper.to_array(matrix(n)).astype(np.float32)
        key = f"int8.{i}"
        if after_gelu(n):  # a zero bias: the Add that carries the shift back (the graph's own bias Add follows)
            int8.linear(n.input[0], w, np.zeros(w.shape[1], np.float32), key, gelu=True, key=key + ".x", result=n.output[0])
        else:
            int8.linear(n.input[0], w, None, key, amax=amax[n.input[0]], key=key + ".x", result=n.output[0])
    used = {i for n in built.nodes for i in n.input}
    nodes = [n for n in built.nodes if not (n.op_type == "Identity" and n.output[0] not in used)]
    used = {i for n in nodes for i in n.input}
    del g.node[:]
    g.node.extend(nodes)
    kept = [t for t in g.initializer if t.name in used] + [t for t in built.inits if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    return sorted(rewritten)
