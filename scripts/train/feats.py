"""The cached token states of encode_texts.py: index.json {text: [part, start, length]} and tokens-<part>.npy."""
import json
import os

import numpy as np


class Feats:
    def __init__(self, folder):
        self.folder = folder
        self.index = json.load(open(os.path.join(folder, "index.json")))
        self.parts = {}

    def __contains__(self, text):
        return text in self.index

    def __call__(self, text):
        """A text's token states [length, 3 x 384], float16, memory-mapped."""
        part, start, n = self.index[text]
        if part not in self.parts:
            self.parts[part] = np.load(os.path.join(self.folder, f"tokens-{part}.npy"), mmap_mode="r")
        return self.parts[part][start : start + n]
