"""How a question becomes the texts the model reads: the same rules as src/engine/decider/texts.ts."""

# The most tokens of each kind of text, specials included, as the service cuts them (cut()).
CAP = {"state": 200, "question": 64, "option": 48}


def cut(ids, kind):
    """A text's token ids cut to its kind's cap, keeping the closing special."""
    cap = CAP[kind]
    return ids if len(ids) <= cap else ids[: cap - 1] + [ids[-1]]


def key_text(key):
    return key.replace("_", " ").strip()


def option_text(key, description):
    d = (description or "").strip()
    return f"{key_text(key)}: {d}" if d else key_text(key)


def noul_sides(criteria):
    if isinstance(criteria, dict) and (criteria.get("true") or criteria.get("false")):
        t, f = (criteria.get("true") or "").strip(), (criteria.get("false") or "").strip()
        return [f"yes: {t}" if t else "yes", f"no: {f}" if f else "no"]
    return ["yes", "no"]


def segments(example):
    """(question text, option texts, label index) of an eval/dev-style example."""
    t, c, label = example["type"], example["criteria"], example["label"]
    q = (example.get("instructions") or "").strip()
    if t == "noul":
        return q, noul_sides(c), 0 if label else 1
    if t == "choice":
        keys = list(c.keys())
        return q, [option_text(k, c[k]) for k in keys], keys.index(label)
    if isinstance(c, dict):  # score levels given as {key: description}
        keys = list(c.keys())
        return q, [option_text(k, c[k]) for k in keys], label if isinstance(label, int) else keys.index(label)
    return q, [str(level).strip() for level in c], label
