#!/usr/bin/python3
"""Writes test/fixtures/tiny-nli/: a tiny NLI cross-encoder in the Hugging Face folder layout.

Run from the repository root (needs Debian's python3-onnx, which brings numpy):

    apt-get install -y python3-onnx
    /usr/bin/python3 scripts/make-onnx-fixture.py

The output is deterministic (no random weights, fixed file order), so re-running it gives the same
bytes. What it writes:

  config.json            id2label {0: entailment, 1: neutral, 2: contradiction}
  tokenizer.json         WordPiece over a small hand-written English vocabulary (lower-cased, BERT
                         pre-tokenizer, [CLS] A [SEP] B [SEP] pair template with token types 0/1);
                         letters and ##letters make every ASCII word tokenizable
  tokenizer_config.json
  svc-model.json         pair templates and calibration for svc
  onnx/model.onnx        the graph below, float32
  onnx/model_quantized.onnx  the same graph with the embedding table stored as int8

The graph is BERT-shaped at its edges (input_ids, attention_mask, token_type_ids as int64 in, logits
[batch, 3] out) and trivially small inside, chosen so that its answers can be checked by hand:

  E      = one-hot embedding of every word-piece (special tokens embed to zeros)
  mean_A = masked mean of E over the premise tokens (mask * (1 - token_type))
  mean_B = masked mean of E over the hypothesis tokens (mask * token_type)
  cos    = mean_A . mean_B / max(|mean_A| |mean_B|, 1e-12)
           (= cosine of the word-piece count vectors of premise and hypothesis)
  logits = cos * [6, 0, -6] + [-2, 0, 2]        (entailment, neutral, contradiction)

So a hypothesis sharing word-pieces with the premise gets a higher entailment logit, and
entailment - contradiction = 12 * cos - 4.
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "fixtures", "tiny-nli")

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LETTERS = list("abcdefghijklmnopqrstuvwxyz")
DIGITS = list("0123456789")
PUNCT = list(".,!?;:'\"()-/&%$@#*+=")
WORDS = """
the a an and or but if then of to in on at by for with from about as into over under after before
is are was were be been being am do does did done have has had will would can could should may
might must not no yes never always very too also only just more most less some any all each every
i you he she it we they me him her us them my your his its our their this that these those there
here what which who whom whose why how when where
customer customers client account accounts user users order orders payment payments card cards
charge charged refund refunds invoice invoices subscription price prices money bill billing twice
extra month months week day days year time today yesterday tomorrow please thank thanks help
problem problems issue issues error errors bug bugs crash crashes app website login password email
phone support ticket service product products delivery shipping package arrived late lost broken
damaged wrong missing return replace cancel cancelled update question answer
happy sad angry upset calm annoyed furious glad pleased satisfied unhappy disappointed worried
good bad great terrible awful fine ok okay nice poor excellent
cat cats dog dogs bird fish horse cow animal animals pet pets
red blue green yellow black white color
sat sit run runs ran walk eat eats ate sleep sleeps sleeping play plays played
big small fast slow hot cold new old
house home car road city park garden school office room kitchen table chair door window
man woman child children people person friend family
want wants need needs like likes love loves hate hates ask asks asked get got make made
go goes went come came see saw know knew think thought say said tell told give gave take took
english spanish french language
option options level levels fits best means
""".split()


def vocab_list():
    seen = set()
    out = []
    for tok in SPECIALS + PUNCT + DIGITS + LETTERS + ["##" + c for c in LETTERS + DIGITS] + ["##s", "##ed", "##ing", "##ly", "##er"] + WORDS:
        if tok not in seen:
            seen.add(tok)
            out.append(tok)
    return out


def tokenizer_json(vocab):
    ids = {tok: i for i, tok in enumerate(vocab)}
    added = [
        {"id": ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for t in SPECIALS
    ]
    cls = {"id": "[CLS]", "ids": [ids["[CLS]"]], "tokens": ["[CLS]"]}
    sep = {"id": "[SEP]", "ids": [ids["[SEP]"]], "tokens": ["[SEP]"]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": {"[CLS]": cls, "[SEP]": sep},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ids},
    }


def graph(vocab, quantized):
    v = len(vocab)
    table = np.eye(v, dtype=np.float32)
    for i, tok in enumerate(vocab):
        if tok in SPECIALS:
            table[i, i] = 0.0
    inits = [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "eps"),
        numpy_helper.from_array(np.array([[6.0, 0.0, -6.0]], dtype=np.float32), "dense_w"),
        numpy_helper.from_array(np.array([-2.0, 0.0, 2.0], dtype=np.float32), "dense_b"),
    ]
    nodes = []
    if quantized:
        inits += [
            numpy_helper.from_array(table.astype(np.int8), "emb_q"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "emb_scale"),
            numpy_helper.from_array(np.array(0, dtype=np.int8), "emb_zero"),
        ]
        nodes.append(helper.make_node("DequantizeLinear", ["emb_q", "emb_scale", "emb_zero"], ["emb"]))
    else:
        inits.append(numpy_helper.from_array(table, "emb"))
    n = helper.make_node
    nodes += [
        n("Gather", ["emb", "input_ids"], ["e"], axis=0),  # [B, T, V]
        n("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        n("Cast", ["token_type_ids"], ["tt"], to=TensorProto.FLOAT),
        n("Sub", ["one", "tt"], ["not_tt"]),
        n("Mul", ["m", "not_tt"], ["ma"]),
        n("Mul", ["m", "tt"], ["mb"]),
    ]
    for side in ("a", "b"):
        nodes += [
            n("Unsqueeze", [f"m{side}", "axis2"], [f"m{side}3"]),
            n("Mul", ["e", f"m{side}3"], [f"e{side}"]),
            n("ReduceSum", [f"e{side}", "axis1"], [f"sum_{side}"], keepdims=0),  # [B, V]
            n("ReduceSum", [f"m{side}", "axis1"], [f"cnt_{side}"], keepdims=1),  # [B, 1]
            n("Max", [f"cnt_{side}", "one"], [f"den_{side}"]),
            n("Div", [f"sum_{side}", f"den_{side}"], [f"mean_{side}"]),
            n("Mul", [f"mean_{side}", f"mean_{side}"], [f"sq_{side}"]),
            n("ReduceSum", [f"sq_{side}", "axis1"], [f"ss_{side}"], keepdims=1),
            n("Sqrt", [f"ss_{side}"], [f"norm_{side}"]),
        ]
    nodes += [
        n("Mul", ["mean_a", "mean_b"], ["ab"]),
        n("ReduceSum", ["ab", "axis1"], ["dot"], keepdims=1),  # [B, 1]
        n("Mul", ["norm_a", "norm_b"], ["nn"]),
        n("Max", ["nn", "eps"], ["nn_safe"]),
        n("Div", ["dot", "nn_safe"], ["cos"]),
        n("MatMul", ["cos", "dense_w"], ["wx"]),  # [B, 3]
        n("Add", ["wx", "dense_b"], ["logits"]),
    ]
    ints = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in ("input_ids", "attention_mask", "token_type_ids")]
    out = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 3])]
    g = helper.make_graph(nodes, "tiny-nli", ints, out, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="svc make-onnx-fixture")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    vocab = vocab_list()
    os.makedirs(os.path.join(OUT, "onnx"), exist_ok=True)
    write_json(os.path.join(OUT, "config.json"), {
        "_comment": "Test fixture written by scripts/make-onnx-fixture.py; not a trained model.",
        "architectures": ["TinyNliForSequenceClassification"],
        "model_type": "bert",
        "id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"},
        "label2id": {"entailment": 0, "neutral": 1, "contradiction": 2},
        "vocab_size": len(vocab),
        "max_position_embeddings": 512,
        "pad_token_id": 0,
    })
    with open(os.path.join(OUT, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab), f, ensure_ascii=False)
        f.write("\n")
    write_json(os.path.join(OUT, "tokenizer_config.json"), {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "model_max_length": 512,
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "mask_token": "[MASK]",
    })
    write_json(os.path.join(OUT, "svc-model.json"), {
        "languages": ["en"],
        "template_language": "en",
        "templates": {
            "en": {
                "choice_question": "Which option fits best?",
                "score_question": "Which level fits best?",
                "option": "{key}: {description}",
                "option_key_only": "{key}",
                "level": "{description}",
                "level_key_only": "{key}",
                "yes": "Yes means: {text}",
                "no": "No means: {text}",
            }
        },
        "calibration": {
            "choice": {"temperature": 1.0},
            "score": {"temperature": 1.0},
            "noul": {"a": 1.0, "b": 0.0},
            "default_min_confidence": 0.2,
        },
    })
    for name, quantized in (("model.onnx", False), ("model_quantized.onnx", True)):
        onnx.save(graph(vocab, quantized), os.path.join(OUT, "onnx", name))
    print(f"wrote {OUT} ({len(vocab)} tokens)")


if __name__ == "__main__":
    main()
