#!/usr/bin/python3
"""Turns the permissively licensed public sets in a data folder into decision-shaped training
examples (the JSON-lines schema of eval/dev: state, type, instructions, criteria, label), for
scripts/train-cross-encoder.py. The output is derived from the data sets and stays out of the
repository (training/build/ is ignored); the trained weights are what ships.

    /usr/bin/python3 scripts/build-decision-examples.py --data ../shared/data --out training/build/public.jsonl

Standard library only; deterministic (seed 12); about 10 s. What each set becomes:
  NLI (MultiNLI matched dev, SNLI dev+test: en; InferBR train: pt) -> noul "is this stated?",
      entailment = yes, contradiction and neutral = no; a share as a 3-way choice.
  intents (CLINC150 train, BANKING77 train, HWU64) -> choice over the gold intent and sampled others,
      keys only or with a description, several question phrasings; noul "is the user asking about X?".
      HELD_OUT_INTENTS (40 CLINC150 intents picked by hash) never train: they measure zero-shot choice.
  offensive (Davidson et al.) -> noul and choice (hate speech / offensive / neither).
  emotions (XED en + es/pt/fr/de projections, lines with one label) -> choice over emotion names,
      noul "does the speaker express X?", and a 3-level polarity score (ordinal).
Sets whose license forbids shipping a model trained on them (XNLI, SICK, PLUE, MultiNLI mismatched
for measuring) are not read here.
"""

import argparse
import csv
import hashlib
import json
import lzma
import os
import random

SEED = 12
rng = random.Random(SEED)


def h(text):
    return int(hashlib.sha1(text.encode("utf8")).hexdigest()[:8], 16)


def held_out_intents(names):
    """40 CLINC150 intents, by hash: never in training; `svc eval --public` measures zero-shot on them."""
    return set(sorted(names, key=lambda n: h("held-out:" + n))[:40])


def words(key):
    return key.replace("_", " ").strip()


def xz_csv(path, delimiter=","):
    with lzma.open(path, "rt", encoding="utf8") as f:
        yield from csv.reader(f, delimiter=delimiter)


out = []


def add(src, lang, domain, state, kind, instructions, criteria, label):
    state = " ".join(str(state).split())
    if not state:
        return
    n = len(out)
    out.append({"id": f"{src}-{n}", "group": f"{src}-{n}", "lang": lang, "domain": domain, "state": state, "type": kind,
                "instructions": instructions, "criteria": criteria, "label": label})


# ---- NLI ----
NLI_Q = {
    "en": ["Does the text say that {h}?", "Is it true, according to the text, that {h}?", "Based on the text: {h}",
           "Can we conclude from the message that {h}?", "Is this stated or clearly implied: {h}", "True or false: {h}"],
    "pt": ["O texto diz que {h}?", "Segundo o texto, é verdade que {h}?", "Com base no texto: {h}",
           "Podemos concluir da mensagem que {h}?", "Verdadeiro ou falso: {h}"],
}
NLI_MEANING = {
    "en": [{"true": "The text states or clearly implies it", "false": "The text contradicts it or does not say so"},
           {"true": "Yes, it follows from the text", "false": "No, or the text does not tell"}],
    "pt": [{"true": "O texto afirma ou deixa claro", "false": "O texto contradiz ou não diz"},
           {"true": "Sim, decorre do texto", "false": "Não, ou o texto não informa"}],
}
NLI_CHOICE = {
    "en": ("What does the text say about this statement: {h}", {"true": "The text says it is true", "false": "The text says it is false", "unknown": "The text does not say"}),
    "pt": ("O que o texto diz sobre esta afirmação: {h}", {"verdadeiro": "O texto diz que é verdade", "falso": "O texto diz que é falso", "desconhecido": "O texto não diz"}),
}


def hypothesis_clause(text):
    text = text.strip().rstrip(".!?")
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def nli(lang, premise, hyp, label, src, limit_choice=0.2):
    """label: 'entailment' | 'contradiction' | 'neutral'."""
    if not premise or not hyp or label not in ("entailment", "contradiction", "neutral"):
        return
    if rng.random() < limit_choice:
        q, crit = NLI_CHOICE[lang]
        keys = list(crit)
        gold = keys[{"entailment": 0, "contradiction": 1, "neutral": 2}[label]]
        items = list(crit.items())
        rng.shuffle(items)
        add(src, lang, "nli", premise, "choice", q.format(h=hyp.strip()), dict(items), gold)
        return
    q = rng.choice(NLI_Q[lang])
    clause = hyp.strip() if q.endswith(": {h}") else hypothesis_clause(hyp)
    crit = rng.choice(NLI_MEANING[lang]) if rng.random() < 0.4 else None
    add(src, lang, "nli", premise, "noul", q.format(h=clause), crit, label == "entailment")


def read_nli(data, caps):
    for name, cap in (("multinli_1.0_dev_matched", caps), ("snli_1.0_dev", caps // 2), ("snli_1.0_test", caps // 2)):
        rows = list(xz_csv(os.path.join(data, "mnli-snli-dev", name + ".csv.xz")))[1:]
        rng.shuffle(rows)
        for r in rows[:cap]:
            nli("en", r[1], r[2], r[3], "nli-en")
    rows = list(xz_csv(os.path.join(data, "inferbr-pt", "train.csv.xz")))[1:]
    rng.shuffle(rows)
    names = {"0": "contradiction", "1": "entailment", "2": "neutral"}
    for r in rows:
        if r[6].strip().upper() == "S":  # flagged low quality
            continue
        nli("pt", r[1], r[2], names.get(r[3]), "nli-pt")


# ---- intents ----
INTENT_Q = ["What does the user want?", "Which intent does this message express?", "What is the customer asking for?",
            "Classify this request.", "Pick the intent of the utterance.", "Which of these best describes the request?", None]
INTENT_DESC = ["The user wants help with: {w}", "Request about {w}", "{W}", "Anything related to {w}"]
INTENT_NOUL = ["Is the user asking about {w}?", "Is this request about {w}?", "Does the message ask for {w}?"]


def intent_examples(src, rows, names, per_intent, held=frozenset()):
    by = {}
    for text, intent in rows:
        if intent in held or intent == "oos":
            continue
        by.setdefault(intent, []).append(text)
    pool = sorted(set(n for n in names if n not in held and n != "oos"))
    for intent in sorted(by):
        texts = by[intent]
        rng.shuffle(texts)
        for text in texts[:per_intent]:
            if rng.random() < 0.25:
                other = rng.choice(pool)
                target = intent if rng.random() < 0.5 else other
                add(src, "en", "intent", text, "noul", rng.choice(INTENT_NOUL).format(w=words(target)), None, target == intent)
                continue
            k = rng.randint(3, 8)
            options = [intent] + rng.sample([n for n in pool if n != intent], k - 1)
            rng.shuffle(options)
            described = rng.random() < 0.5
            tpl = rng.choice(INTENT_DESC)
            crit = {o: (tpl.format(w=words(o), W=words(o).capitalize()) if described else "") for o in options}
            add(src, "en", "intent", text, "choice", rng.choice(INTENT_Q), crit, intent)


def read_intents(data, per_intent):
    clinc = json.load(lzma.open(os.path.join(data, "clinc150", "data_full.json.xz"), "rt"))
    names = sorted({i for _, i in clinc["train"]})
    held = held_out_intents([n for n in names if n != "oos"])
    intent_examples("clinc", clinc["train"], names, per_intent, held)
    rows = [(r[0], r[1]) for r in list(xz_csv(os.path.join(data, "banking77", "train.csv.xz")))[1:]]
    intent_examples("banking", rows, sorted({i for _, i in rows}), per_intent)
    rows = [(r[6].strip("<>"), f"{r[2]}_{r[3]}") for r in list(xz_csv(os.path.join(data, "hwu64", "hwu64_kfold_testsets.csv.xz")))[1:]]
    intent_examples("hwu", rows, sorted({i for _, i in rows}), per_intent)


# ---- offensive ----
OFF_Q = [("Is this message offensive?", {"true": "Insulting, vulgar or hateful language", "false": "No offensive language"}, "any"),
         ("Does this post contain hate speech?", {"true": "Attacks or demeans a group for who they are", "false": "No hate speech, though it may be rude"}, "hate"),
         ("Is the tweet free of offensive language?", None, "clean"),
         ("Should a moderator remove this post for abusive language?", None, "any")]


def read_offensive(data, cap):
    rows = list(xz_csv(os.path.join(data, "davidson-offensive", "labeled_data.csv.xz")))[1:]
    by = {"0": [], "1": [], "2": []}
    for r in rows:
        text = " ".join(w for w in r[6].split() if not w.startswith("@") and not w.startswith("http") and w != "RT").replace("&amp;", "&")
        if len(text) > 10 and r[5] in by:
            by[r[5]].append(text)
    for cls, texts in by.items():
        rng.shuffle(texts)
        for text in texts[: cap if cls != "0" else cap // 2]:
            if rng.random() < 0.3:
                crit = {"hate_speech": "Hateful toward a group", "offensive": "Offensive or vulgar but not hate speech", "neither": "Neither offensive nor hateful"}
                items = list(crit.items())
                rng.shuffle(items)
                add("offensive", "en", "moderation", text, "choice", "How should this tweet be labeled?", dict(items), ["hate_speech", "offensive", "neither"][int(cls)])
                continue
            q, crit, what = rng.choice(OFF_Q)
            yes = {"any": cls in ("0", "1"), "hate": cls == "0", "clean": cls == "2"}[what]
            add("offensive", "en", "moderation", text, "noul", q, crit if rng.random() < 0.6 else None, yes)


# ---- emotions ----
EMOTIONS = {"en": ["anger", "anticipation", "disgust", "fear", "joy", "sadness", "surprise", "trust"],
            "es": ["ira", "anticipación", "asco", "miedo", "alegría", "tristeza", "sorpresa", "confianza"],
            "pt": ["raiva", "antecipação", "nojo", "medo", "alegria", "tristeza", "surpresa", "confiança"],
            "fr": ["colère", "anticipation", "dégoût", "peur", "joie", "tristesse", "surprise", "confiance"],
            "de": ["Wut", "Vorfreude", "Ekel", "Angst", "Freude", "Traurigkeit", "Überraschung", "Vertrauen"]}
EMO_Q = {"en": ("Which emotion does the speaker express?", "Does the speaker express {e}?", "How does the speaker feel overall?",
                ["Negative", "Neutral or mixed", "Positive"]),
         "es": ("¿Qué emoción expresa quien habla?", "¿Expresa quien habla {e}?", "¿Cómo se siente quien habla en general?",
                ["Negativo", "Neutral o mixto", "Positivo"]),
         "pt": ("Que emoção a pessoa expressa?", "A pessoa expressa {e}?", "Como a pessoa se sente no geral?",
                ["Negativo", "Neutro ou misto", "Positivo"]),
         "fr": ("Quelle émotion la personne exprime-t-elle ?", "La personne exprime-t-elle de la {e} ?", "Comment la personne se sent-elle dans l'ensemble ?",
                ["Négatif", "Neutre ou mitigé", "Positif"]),
         "de": ("Welches Gefühl drückt die Person aus?", "Drückt die Person {e} aus?", "Wie fühlt sich die Person insgesamt?",
                ["Negativ", "Neutral oder gemischt", "Positiv"])}
POLARITY = {1: 0, 3: 0, 4: 0, 6: 0, 5: 2, 8: 2}  # anger, disgust, fear, sadness -> negative; joy, trust -> positive


def read_emotions(data, caps):
    for lang, name in (("en", "en-annotated"), ("es", "es-projections"), ("pt", "pt-projections"), ("fr", "fr-projections"), ("de", "de-projections")):
        rows = []
        with lzma.open(os.path.join(data, "xed-emotion", name + ".tsv.xz"), "rt", encoding="utf8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 2:
                    continue
                labels = [int(x) for x in parts[1].replace(" ", "").split(",") if x.isdigit()]
                if len(labels) == 1 and 1 <= labels[0] <= 8 and len(parts[0].split()) >= 4:
                    rows.append((parts[0], labels[0]))
        rng.shuffle(rows)
        names = EMOTIONS[lang]
        cq, nq, sq, levels = EMO_Q[lang]
        for text, lab in rows[: caps[lang]]:
            r = rng.random()
            if r < 0.4:
                options = [lab] + rng.sample([i for i in range(1, 9) if i != lab], rng.randint(2, 5))
                rng.shuffle(options)
                add("xed-" + lang, lang, "emotion", text, "choice", cq, {names[i - 1].lower().replace(" ", "_"): "" for i in options}, names[lab - 1].lower())
            elif r < 0.7 or lab not in POLARITY:
                target = lab if rng.random() < 0.5 else rng.choice([i for i in range(1, 9) if i != lab])
                e = names[target - 1] if lang == "de" else names[target - 1].lower()
                add("xed-" + lang, lang, "emotion", text, "noul", nq.format(e=e), None, target == lab)
            else:
                add("xed-" + lang, lang, "emotion", text, "score", sq, levels, POLARITY[lab])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=os.path.join("..", "shared", "data"))
    p.add_argument("--out", default=os.path.join("training", "build", "public.jsonl"))
    p.add_argument("--nli", type=int, default=6000, help="MultiNLI matched pairs (SNLI gets the same in all)")
    p.add_argument("--per-intent", type=int, default=25)
    p.add_argument("--offensive", type=int, default=1500)
    a = p.parse_args()
    read_nli(a.data, a.nli)
    read_intents(a.data, a.per_intent)
    read_offensive(a.data, a.offensive)
    read_emotions(a.data, {"en": 3000, "es": 2000, "pt": 2000, "fr": 2000, "de": 2000})
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", encoding="utf8") as f:
        for e in out:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    counts = {}
    for e in out:
        k = (e["id"].rsplit("-", 1)[0], e["type"])
        counts[k] = counts.get(k, 0) + 1
    print(json.dumps({"examples": len(out), "by_source_type": {f"{a}/{b}": n for (a, b), n in sorted(counts.items())}}, indent=1))


if __name__ == "__main__":
    main()
