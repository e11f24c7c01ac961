"""Build the decision model's training examples from the permissively licensed sets in ../shared/data and the
project-authored examples (training/authored). Writes training/build/examples.jsonl: one question per line,
{"src", "lang", "type", "state", "question", "options": [...], "label": index, "split": "train" | "dev"}.
The dev split (a state's sha1 mod 20 == 0) chooses the checkpoint and fits temperatures; eval/ is never read.
Seed 23; deterministic; a few seconds on 2 cores.

Used (licenses in NOTICE): InferBR train (MIT), MultiNLI dev matched (OANC; its fiction genre CC BY-SA 3.0 / CC BY 3.0 / public domain),
CLINC150 (CC BY 3.0) without the 40 intents held out for `svc eval --public`, Banking77 (CC BY 4.0),
HWU64 (CC BY 4.0), XED (CC BY 4.0), Davidson offensive (MIT); with --translated, MultiNLI dev matched pairs translated
into Spanish, French and German for this project (training/translated, CC BY-SA 3.0). Not used: XNLI (non-commercial), PLUE (GPL),
the small NLI sets and SICK (unclear or non-commercial), SNLI (share-alike).
"""
import argparse
import csv
import glob
import hashlib
import io
import json
import lzma
import os
import random

from texts import key_text, segments

p = argparse.ArgumentParser()
p.add_argument("--data", default="../shared/data")
p.add_argument("--out", default="training/build/examples.jsonl")
p.add_argument("--translated", default="", help="translated MultiNLI files to add (a glob, e.g. 'training/translated/*.jsonl'); "
               "none by default: svc-1.5.0 was trained without them")
p.add_argument("--twice", default="", help="a question type (noul, choice, score) whose training examples are written "
               "twice, each right after itself (run G: score)")
p.add_argument("--repeat", default="", help="GLOB=N: the training examples of the authored files matching GLOB written N "
               "times, each right after itself (run U: 'training/authored/written/v7-*.jsonl=3')")
a = p.parse_args()
rng = random.Random(23)
D = a.data
out = []


def split_of(state):
    return "dev" if int(hashlib.sha1(state.encode()).hexdigest(), 16) % 20 == 0 else "train"


def add(src, lang, typ, state, question, options, label):
    out.append({"src": src, "lang": lang, "type": typ, "state": state, "question": question, "options": options,
                "label": label, "split": split_of(state)})


def xz_csv(path, **kw):
    return list(csv.DictReader(io.StringIO(lzma.open(path, "rt", encoding="utf-8").read()), **kw))


# --- NLI as yes/no -------------------------------------------------------------------------------------------
NLI_Q = {
    "en": ["{h}", "Is it true that {h}?", "Does the text say that {h}?", "True or false: {h}", "Can we conclude: {h}?"],
    "pt": ["{h}", "É verdade que {h}?", "O texto diz que {h}?", "Verdadeiro ou falso: {h}", "Podemos concluir: {h}?"],
}


def nli_question(lang, h):
    h = h.strip()
    t = rng.choice(NLI_Q[lang])
    return t.format(h=h[0].lower() + h[1:] if t != "{h}" and h[:1].isupper() and not h[:2].isupper() else h).replace(".?", "?")


for r in xz_csv(f"{D}/inferbr-pt/train.csv.xz"):
    if r.get("low_quality") == "S":
        continue
    lab = int(r["label"])  # 0 contradiction, 1 entailment, 2 neutral (InferBR's README; not MultiNLI's order)
    sides = ["yes", "no"]
    add("inferbr", "pt", "noul", r["premise"].strip(), nli_question("pt", r["hypothesis"]), sides, 0 if lab == 1 else 1)
mnli = xz_csv(f"{D}/mnli-snli-dev/multinli_1.0_dev_matched.csv.xz")
for r in mnli:
    if r["label"] not in ("entailment", "neutral", "contradiction"):
        continue
    add("mnli-matched", "en", "noul", r["sentence1"].strip(), nli_question("en", r["sentence2"]), ["yes", "no"],
        0 if r["label"] == "entailment" else 1)

# --- intents as choice over sampled intents ----------------------------------------------------------------------
INTENT_Q = ["What does the user want?", "Which intent does this message express?", "Classify the request.",
            "Pick the intent of this utterance.", "What is the customer asking for?", "Route this message.", ""]


def sha1_head(s):
    return int(hashlib.sha1(s.encode()).hexdigest()[:8], 16)


clinc = json.loads(lzma.open(f"{D}/clinc150/data_full.json.xz", "rt").read())
names = sorted({i for _, i in clinc["train"] if i != "oos"})
held = set(sorted(names, key=lambda n: sha1_head(f"held-out:{n}"))[:40])


def intent_examples(src, rows, per_intent):
    labels = sorted({i for _, i in rows})
    by = {}
    for t, i in rows:
        by.setdefault(i, []).append(t)
    for i, texts in sorted(by.items()):
        rng.shuffle(texts)
        for t in texts[:per_intent]:
            r = rng.random()
            k = rng.randint(2, 8) if r < 0.8 else rng.randint(9, 30) if r < 0.97 else rng.randint(50, len(labels))
            k = min(k, len(labels))
            opts = [i] + rng.sample([l for l in labels if l != i], k - 1)
            rng.shuffle(opts)
            add(src, "en", "choice", t.strip(), rng.choice(INTENT_Q), [key_text(o) for o in opts], opts.index(i))


intent_examples("clinc150", [(t, i) for t, i in clinc["train"] if i != "oos" and i not in held], 40)
intent_examples("banking77", [(r["text"], r["category"]) for r in xz_csv(f"{D}/banking77/train.csv.xz")], 40)
hwu = xz_csv(f"{D}/hwu64/hwu64_kfold_testsets.csv.xz")
intent_examples("hwu64", [(r["answer_from_anno"], f"{r['scenario']}_{r['intent']}") for r in hwu], 40)

# --- XED emotions: choice of emotion, and polarity as a scale -----------------------------------------------------
EMO = {1: "anger", 2: "anticipation", 3: "disgust", 4: "fear", 5: "joy", 6: "sadness", 7: "surprise", 8: "trust"}
EMO_Q = {"en": ["Which emotion does this line express?", "What is the speaker feeling?", ""],
         "es": ["¿Qué emoción expresa esta frase?", "¿Qué siente quien habla?", ""],
         "pt": ["Que emoção esta fala expressa?", "O que a pessoa está sentindo?", ""],
         "fr": ["Quelle émotion exprime cette réplique ?", "Que ressent la personne qui parle ?", ""],
         "de": ["Welche Emotion drückt dieser Satz aus?", "Was fühlt die sprechende Person?", ""]}
POL = {"en": (["negative", "neutral", "positive"], "What is the tone of this line?"),
       "es": (["negativo", "neutro", "positivo"], "¿Qué tono tiene esta frase?"),
       "pt": (["negativo", "neutro", "positivo"], "Qual é o tom desta fala?"),
       "fr": (["négatif", "neutre", "positif"], "Quel est le ton de cette réplique ?"),
       "de": (["negativ", "neutral", "positiv"], "Welchen Ton hat dieser Satz?")}
for lang, fn in (("en", "en-annotated"), ("es", "es-projections"), ("pt", "pt-projections"), ("fr", "fr-projections"),
                 ("de", "de-projections")):
    rows = []
    for line in lzma.open(f"{D}/xed-emotion/{fn}.tsv.xz", "rt", encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 2:
            continue
        labs = [int(x) for x in parts[1].replace(" ", "").split(",") if x.strip().isdigit()]
        if len(labs) == 1 and labs[0] in EMO and len(parts[0].split()) >= 4:
            rows.append((parts[0].strip(), labs[0]))
    rng.shuffle(rows)
    for text, lab in rows[:1500]:
        k = rng.randint(3, 8)
        opts = [EMO[lab]] + rng.sample([e for l, e in EMO.items() if l != lab], k - 1)
        rng.shuffle(opts)
        add("xed", lang, "choice", text, rng.choice(EMO_Q[lang]), opts, opts.index(EMO[lab]))
    for text, lab in rows[1500:2100]:
        if lab in (1, 3, 4, 6, 5, 8):
            levels, q = POL[lang]
            add("xed-polarity", lang, "score", text, q, levels, 2 if lab in (5, 8) else 0)

# --- offensive language as yes/no ----------------------------------------------------------------------------------
dav = xz_csv(f"{D}/davidson-offensive/labeled_data.csv.xz")
rng.shuffle(dav)
for r in dav[:3000]:
    cls = int(r["class"])  # 0 hate speech, 1 offensive, 2 neither
    tweet = r["tweet"].strip()
    if rng.random() < 0.5:
        add("davidson", "en", "noul", tweet, rng.choice(["Is this tweet offensive?", "Does this post contain offensive language?"]),
            ["yes", "no"], 0 if cls in (0, 1) else 1)
    else:
        add("davidson", "en", "noul", tweet, "Is this hate speech?",
            ["yes: it attacks people for who they are", "no: not hate speech"], 0 if cls == 0 else 1)

# --- project-authored examples -----------------------------------------------------------------------------------
files = ["training/authored/examples.jsonl"] + sorted(glob.glob("training/authored/written/*.jsonl"))
repeat_glob, _, repeat_n = a.repeat.partition("=")
if a.repeat and not repeat_n.isdigit():
    p.error(f"--repeat takes GLOB=N with N a whole number, got {a.repeat!r}")
repeated = set(glob.glob(repeat_glob)) if a.repeat else set()
times = {}  # index in out -> how many times it is written (training split only)
n_auth = 0
for fpath in files:
    for line in open(fpath, encoding="utf-8"):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            q, opts, lab = segments(e)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        st = e["state"] if isinstance(e["state"], str) else json.dumps(e["state"], ensure_ascii=False)
        add("authored", e["lang"], e["type"], st, q, opts, lab)
        if fpath in repeated:
            times[len(out) - 1] = int(repeat_n)
        n_auth += 1

# --- yes/no questions derived from the choice and scale examples above -------------------------------------------
# The public yes/no sets are entailment and offensive language; the questions users ask most ("Is this about
# billing?", "Is the customer happy?") had few examples, and on them the scorer's yes and no sides scored alike
# whatever the text. Each derived question keeps its example's state, language and split: "is this about <the gold
# option or another option of the same question>?", and XED polarity lines as "is the speaker happy / upset?".
ABOUT = {"en": ["Is this about {x}?", "Does this message concern {x}?", "Is the topic {x}?"],
         "es": ["¿Se trata de {x}?", "¿Este mensaje trata sobre {x}?"],
         "pt": ["Isto é sobre {x}?", "Esta mensagem trata de {x}?"],
         "fr": ["Est-ce que cela concerne {x} ?", "Ce message parle-t-il de {x} ?"],
         "de": ["Geht es hier um {x}?", "Betrifft diese Nachricht {x}?"]}
MOOD = {"en": (["Is the speaker happy?", "Is this a positive message?", "Is the writer pleased?"],
               ["Is the speaker upset?", "Is this a negative message?", "Is the writer angry or unhappy?"]),
        "es": (["¿Está contenta la persona que habla?", "¿Es un mensaje positivo?"], ["¿Está molesta la persona que habla?", "¿Es un mensaje negativo?"]),
        "pt": (["A pessoa está contente?", "É uma mensagem positiva?"], ["A pessoa está chateada?", "É uma mensagem negativa?"]),
        "fr": (["La personne est-elle contente ?", "Est-ce un message positif ?"], ["La personne est-elle fâchée ?", "Est-ce un message négatif ?"]),
        "de": (["Ist die Person zufrieden?", "Ist das eine positive Nachricht?"], ["Ist die Person verärgert?", "Ist das eine negative Nachricht?"])}
derived = []
for e in out:
    if e["type"] == "choice" and e["lang"] in ABOUT and e["src"] in ("clinc150", "banking77", "hwu64", "authored") and rng.random() < 0.3:
        yes = rng.random() < 0.5
        x = e["options"][e["label"]] if yes else rng.choice([o for i, o in enumerate(e["options"]) if i != e["label"]])
        derived.append(("derived-about", e["lang"], e["state"], rng.choice(ABOUT[e["lang"]]).format(x=x.split(": ", 1)[0]), 0 if yes else 1))
    elif e["src"] == "xed-polarity":
        positive = e["label"] == 2
        ask_positive = rng.random() < 0.5
        derived.append(("derived-mood", e["lang"], e["state"], rng.choice(MOOD[e["lang"]][0 if ask_positive else 1]), 0 if positive == ask_positive else 1))
for src, lang, st, q, lab in derived:
    add(src, lang, "noul", st, q, ["yes", "no"], lab)

# --- MultiNLI pairs translated into es, fr and de (training/translated) ------------------------------------------
# Last, with a generator of their own, so that every example above (and the dev split's first examples, which
# calibrate quantize_scorer.py) stays as it was.
NLI_Q_MORE = {
    "es": ["{h}", "¿Es cierto que {h}?", "¿Dice el texto que {h}?", "Verdadero o falso: {h}", "¿Podemos concluir que {h}?"],
    "fr": ["{h}", "Est-il vrai que {h} ?", "Le texte dit-il que {h} ?", "Vrai ou faux : {h}", "Peut-on en conclure que {h} ?"],
    "de": ["{h}", "Stimmt das: {h}?", "Sagt der Text das aus: {h}?", "Wahr oder falsch: {h}", "Lässt sich daraus schließen: {h}?"],
}
LOWER_FIRST = {
    "es": set("el la los las un una unos unas él ella ellos ellas ello esto este esta estos estas ese esa esos esas eso aquel "
              "hay no nadie nada todo todos todas algunos algunas alguien su sus mi mis nuestro nuestra nosotros yo tú usted "
              "ustedes se lo le les muchos muchas cada ninguno ninguna".split()),
    "fr": set("le la les l un une des du il elle ils elles on ce cet cette ces c je j tu nous vous personne rien tout tous "
              "toutes certains certaines son sa ses leur leurs mon ma mes notre nos ne n aucun aucune il y beaucoup chaque "
              "quelqu quelques plusieurs".split()),
    "de": set(),
}
rng_more = random.Random(1127)
for fpath in sorted(glob.glob(a.translated)) if a.translated else []:
    for line in open(fpath, encoding="utf-8"):
        r = json.loads(line)
        h = r["hypothesis"].strip()
        t = rng_more.choice(NLI_Q_MORE[r["lang"]])
        if t != "{h}":
            h = h.rstrip(".!?¿¡ ")
            # after a lead-in, a sentence's first word is lowered only where it is an article, a pronoun or the like
            # (German capitalises nouns; names keep their capital in every language)
            first = h.replace("'", " ").replace("’", " ").split(" ")[0]
            if first.lower() in LOWER_FIRST[r["lang"]] and h[:1].isupper():
                h = h[0].lower() + h[1:]
        add("mnli-translated", r["lang"], "noul", r["premise"].strip(), t.format(h=h), ["yes", "no"],
            0 if r["label"] == "entailment" else 1)

os.makedirs(os.path.dirname(a.out), exist_ok=True)
with open(a.out, "w", encoding="utf-8") as fo:
    for i, e in enumerate(out):
        line = json.dumps(e, ensure_ascii=False) + "\n"
        n = times.get(i, 2 if e["type"] == a.twice else 1) if e["split"] == "train" else 1
        fo.write(line * n)
from collections import Counter
print(len(out), "examples;", n_auth, "authored;", Counter(e["src"] for e in out), Counter(e["split"] for e in out))
print("distinct states", len({e["state"] for e in out}), "distinct questions", len({e["question"] for e in out}),
      "distinct options", len({o for e in out for o in e["options"]}))
