"""Text to vectors through an embedding model, float32 packing, and vector search (exact up to 50,000 rows).

Search is brute force: one (n, d) @ (d,) product over a normalized float32
matrix plus `argpartition` for the top k. That is exact and needs no index to
build or tune. The product reads every byte of the matrix (300 MB at 100k x
768), so past SHORTLIST_ABOVE rows the index first ranks every row by the
sign bits of its vector (d/8 bytes, 1/32 of the matrix) and computes the exact
product for the nearest 1/SHORTLIST_SHARE of them only: 7.3-7.6 ms against
13.6-14.0 ms for the whole product at 100k (bench/recall.py). The price is
missing, now and then, a row whose bits said it was far but whose product would
have ranked it in: about 2% of the best 50 at 100k, on real embeddings
(bench/compact_real.py; docs/memory.md, Speed). What a search returns is always
scored exactly. Past a few million vectors an ANN index would win; a personal
planner does not get there.

Embedding models are trained with task prefixes; sending the wrong one (or
none) costs recall quality, so documents and queries get their model's own.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

# Search is one memory-bound matrix-vector product, which a second BLAS thread
# barely speeds up, while idle OpenBLAS threads spin for ~0.1 s after every
# call and take the CPU from the rest of the turn. One thread unless the user
# chose otherwise. Set before numpy loads; this is the planner's only numpy import.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _lazy_import(name: str) -> Any:
    # numpy takes ~0.1 s to import; loading it on first use keeps it off the
    # start-up path (memories load on the first remember/recall anyway).
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import numpy as np
else:
    np = _lazy_import("numpy")

# More rows than this: a sign-bit shortlist, re-scored exactly, instead of a product over every row. Below it
# the product takes a few milliseconds (under an embedding call's time), so search stays exact.
SHORTLIST_ABOVE = 50_000
# The shortlist: 1/12 of the rows searched (8,333 of 100,000), at least 2,000, at least 50 per row asked for.
# On 8,982 real e5-small vectors a shortlist of that share held 98.0% of the exact top 5, which is the share
# of those rows that a recall's 50 candidates are of 100,000; 1/25 held 94.4% (python -m bench.compact_real).
SHORTLIST_SHARE = 12
SHORTLIST_MIN = 2_000
SHORTLIST_PER_HIT = 50

# model-name prefix -> (document prefix, query prefix)
TASK_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),
    "mxbai-embed-large": ("", "Represent this sentence for searching relevant passages: "),
    "snowflake-arctic-embed": ("", "Represent this sentence for searching relevant passages: "),
    "multilingual-e5": ("passage: ", "query: "),
    "e5-": ("passage: ", "query: "),
}

# (model, texts) -> vectors: a ChatModel's `embed` (planner/model/base.py), or any function like it
EmbedFn = Callable[[str, list[str]], list[list[float]]]


def task_prefixes(model: str) -> tuple[str, str]:
    """The (document, query) prefixes an embedding model was trained with."""
    base = model.split("/")[-1]
    for name, prefixes in TASK_PREFIXES.items():
        if base.startswith(name):
            return prefixes
    return ("", "")


def pack(vector: np.ndarray | Sequence[float]) -> bytes:
    """A vector as a little-endian float32 BLOB."""
    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(blob: bytes) -> np.ndarray:
    """A little-endian float32 BLOB as a float32 vector."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)


def unpack_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """Equal-length float32 BLOBs as one (n, d) matrix."""
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)


def row_batches(cursor: Any, size: int = 20_000) -> Iterator[tuple[list[int], np.ndarray]]:
    """(ids, (n, d) matrix) chunks from a cursor of (id, blob) rows, so a million
    vectors never sit in memory as float32 at once."""
    while chunk := cursor.fetchmany(size):
        yield [r[0] for r in chunk], unpack_rows([r[1] for r in chunk])


def normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class Embedder:
    """Embeds documents and queries with one embedding model and its prefixes, through `embed` (a ChatModel's)."""

    def __init__(self, embed: EmbedFn, model: str, batch: int = 64):
        self._embed = embed
        self.model = model
        self.batch = batch
        self.doc_prefix, self.query_prefix = task_prefixes(model)

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), d) float32 normalized rows, sent in batches."""
        out = []
        for i in range(0, len(texts), self.batch):
            chunk = [self.doc_prefix + t for t in texts[i : i + self.batch]]
            out.extend(self._embed(self.model, chunk))
        return normalize(np.asarray(out, dtype=np.float32).reshape(len(texts), -1))

    def query(self, text: str) -> np.ndarray:
        """(d,) float32 normalized query vector."""
        return normalize(np.asarray(self._embed(self.model, [self.query_prefix + text])[0], dtype=np.float32))


def best(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k highest-scoring (id, score) pairs, best first: argpartition, then sort only those k."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(ids[i]), float(scores[i])) for i in top]


def rows_present(sorted_ids: np.ndarray, ids: Sequence[int]) -> list[int]:
    """Those of the ids that are in sorted_ids."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids[np.isin(ids, sorted_ids)].tolist() if len(ids) else []


def sign_bits(rows: np.ndarray, centre: np.ndarray | float) -> np.ndarray:
    """Each row's signs around centre, packed into uint64 words (the row padded to whole words)."""
    pad = -rows.shape[1] % 64
    return np.packbits(np.pad(rows > centre, ((0, 0), (0, pad))), axis=1).view(np.uint64)


def hamming(columns: np.ndarray, query_bits: np.ndarray) -> np.ndarray:
    """The number of bits in which each row differs from query_bits (one row of words), the rows' bits
    given word by word: (words, n). That layout makes each step one pass over n contiguous words; over
    (n, words) rows the sum across a dozen words a row took 3.7 ms at 100,000 rows, this 1.0 ms."""
    out = np.zeros(columns.shape[1], dtype=np.uint16)
    word = np.empty(columns.shape[1], dtype=np.uint64)
    for w, q in enumerate(query_bits):
        np.bitwise_xor(columns[w], q, out=word)
        out += np.bitwise_count(word)
    return out


def shortlist_size(rows: int, k: int) -> int:
    """How many of `rows` candidates a sign-bit shortlist keeps to find the best k among them."""
    return min(rows, max(SHORTLIST_MIN, SHORTLIST_PER_HIT * k, rows // SHORTLIST_SHARE))


def rows_of(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The positions in sorted_ids of those of the ids that are in it (a binary search each)."""
    if not len(sorted_ids):
        return np.empty(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return at[sorted_ids[at] == ids]


class VectorIndex:
    """Normalized vectors with integer ids, searched by cosine similarity.

    Ids are kept sorted (memories get increasing ids), so finding a row is a
    binary search. Rows live in a preallocated matrix that doubles when full,
    so adding one vector is amortised O(d), not a copy of the whole matrix.
    Thread-safe.

    Past `shortlist_above` rows a search computes the exact product only for
    the rows nearest the query by sign bits (the module docstring). The bits are
    taken around the rows' mean, not zero: embedding models put every text in a
    narrow cone, where most dimensions have the same sign for every vector and
    tell none apart (compact.py). They are computed by the first search that
    needs them, kept up to date as rows come and go, and taken again around a
    new mean once the rows have doubled or halved.
    """

    def __init__(self, dim: int | None = None, shortlist_above: int | None = None):
        self.dim = dim
        self.shortlist_above = SHORTLIST_ABOVE if shortlist_above is None else shortlist_above
        self._ids: np.ndarray | None = None  # allocated on first use, so numpy loads then
        self._m: np.ndarray | None = None
        self._bits: np.ndarray | None = None  # the rows' sign bits, (words, as many as _m); None until needed
        self._centre: np.ndarray | None = None  # what the sign bits are taken around
        self._centred_at = 0  # rows when the centre was taken
        self._n = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    def load(self, ids: Sequence[int], matrix: np.ndarray) -> None:
        """Replace the contents with these ids and (n, d) rows."""
        ids = np.asarray(ids, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        with self._lock:
            matrix = normalize(np.asarray(matrix, dtype=np.float32))
            self.dim = matrix.shape[1] if matrix.size else self.dim
            self._ids = ids[order].copy()
            self._m = np.ascontiguousarray(matrix[order])
            self._bits = None
            self._n = len(self._ids)

    def _row(self, id_: int) -> int:
        # Index of id_ in the sorted ids, or -1. Caller holds the lock.
        if not self._n:
            return -1
        i = int(np.searchsorted(self._ids[: self._n], id_))
        return i if i < self._n and self._ids[i] == id_ else -1

    def add(self, id_: int, vector: np.ndarray) -> None:
        """Add one vector, or replace it if the id is present."""
        vector = normalize(np.asarray(vector, dtype=np.float32))
        with self._lock:
            if self._n == 0:
                self.dim = vector.shape[0]
                self._bits = None
            if vector.shape[0] != self.dim:
                raise ValueError(f"vector has {vector.shape[0]} dimensions, the index has {self.dim}")
            bits = sign_bits(vector[None, :], self._centre)[0] if self._bits is not None else None
            row = self._row(id_)
            if row >= 0:
                self._m[row] = vector
                if bits is not None:
                    self._bits[:, row] = bits
                return
            if self._m is None or self._n == len(self._ids) or self._m.shape[1] != self.dim:
                cap = max(16, 2 * self._n)
                m = np.empty((cap, self.dim), dtype=np.float32)
                ids = np.empty(cap, dtype=np.int64)
                if self._n:
                    m[: self._n] = self._m[: self._n]
                    ids[: self._n] = self._ids[: self._n]
                if self._bits is not None:
                    grown = np.zeros((self._bits.shape[0], cap), dtype=np.uint64)
                    grown[:, : self._n] = self._bits[:, : self._n]
                    self._bits = grown
                self._m, self._ids = m, ids
            n = self._n
            at = int(np.searchsorted(self._ids[:n], id_))
            if at < n:  # an id below the largest: shift to keep ids sorted (rare)
                self._m[at + 1 : n + 1] = self._m[at:n].copy()
                self._ids[at + 1 : n + 1] = self._ids[at:n].copy()
                if bits is not None:
                    self._bits[:, at + 1 : n + 1] = self._bits[:, at:n].copy()
            self._m[at], self._ids[at] = vector, id_
            if bits is not None:
                self._bits[:, at] = bits
            self._n += 1

    def remove(self, id_: int) -> None:
        """Drop a vector by id (no-op if absent)."""
        with self._lock:
            row = self._row(id_)
            if row >= 0:
                n = self._n
                self._m[row : n - 1] = self._m[row + 1 : n].copy()
                self._ids[row : n - 1] = self._ids[row + 1 : n].copy()
                if self._bits is not None:
                    self._bits[:, row : n - 1] = self._bits[:, row + 1 : n].copy()
                self._n -= 1

    def _distances(self, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        # The sign-bit distance of these rows (all when None) to the query. Caller holds the lock.
        n = self._n
        if self._bits is None or not self._centred_at / 2 <= n <= 2 * self._centred_at:
            # first needed, or the rows doubled or halved since the mean was taken: take it again
            self._centre = self._m[:n].mean(axis=0)
            self._bits = np.zeros((-(-self.dim // 64), len(self._ids)), dtype=np.uint64)  # word by word (hamming)
            for i in range(0, n, 20_000):  # in parts: one (n, d) array of booleans would be 77 MB at 100k
                self._bits[:, i : min(n, i + 20_000)] = sign_bits(self._m[i : min(n, i + 20_000)], self._centre).T
            self._centred_at = n
        return hamming(
            self._bits[:, :n] if rows is None else self._bits[:, rows], sign_bits(query[None, :], self._centre)[0]
        )

    def _check(self, query: np.ndarray) -> None:
        if query.shape[0] != self.dim:
            raise ValueError(f"query has {query.shape[0]} dimensions, the index has {self.dim}")

    def _scored(self, query: np.ndarray, k: int, rows: np.ndarray | None) -> list[tuple[int, float]]:
        # The best k of these rows (all when None), scored exactly: past `shortlist_above` rows in the index,
        # only those of them nearest by sign bits, when there are more than the shortlist holds. Caller holds
        # the lock.
        count = self._n if rows is None else len(rows)
        if not count or k <= 0:
            return []
        if self._n > self.shortlist_above and count > (keep := shortlist_size(count, k)):
            near = np.argpartition(self._distances(query, rows), keep - 1)[:keep]
            near.sort()  # rows in order: the gather reads memory forward
            rows = near if rows is None else rows[near]
        if rows is None:
            return best(self._ids[: self._n], self._m[: self._n] @ query, k)
        return best(self._ids[rows], self._m[rows] @ query, k)

    def search(self, query: np.ndarray, k: int, within: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The k most similar (id, cosine) pairs, best first; only among the ids `within` (sorted) if given,
        which reads just their rows. Past `shortlist_above` rows, among those nearest by sign bits."""
        with self._lock:
            if self._n == 0 or k <= 0:
                return []
            self._check(query)
            return self._scored(query, k, None if within is None else self._rows(within))

    def search_also(
        self, query: np.ndarray, k: int, within: np.ndarray, k_within: int
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The k most similar overall and the k_within most similar among the ids `within` (sorted), from
        one scan: the second list only picks from the scores the first one computed (past
        `shortlist_above` rows, two shortlists from the sign bits)."""
        with self._lock:
            n = self._n
            if n == 0:
                return [], []
            self._check(query)
            rows = self._rows(within)
            if n > self.shortlist_above:
                return self._scored(query, k, None), self._scored(query, k_within, rows)
            scores = self._m[:n] @ query
            ids = self._ids[:n]
            inside = best(ids[rows], scores[rows], k_within) if len(rows) and k_within > 0 else []
            return best(ids, scores, k) if k > 0 else [], inside

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        # Rows of those of the ids that are present. Caller holds the lock.
        return rows_of(self._ids[: self._n], ids)

    def ids(self) -> np.ndarray:
        """The ids present, sorted."""
        with self._lock:
            return self._ids[: self._n].copy() if self._n else np.empty(0, dtype=np.int64)

    def nbytes(self) -> int:
        """Resident bytes of the index arrays."""
        with self._lock:
            if self._m is None:
                return 0
            return self._m.nbytes + self._ids.nbytes + (self._bits.nbytes if self._bits is not None else 0)

    def similarity(self, ids: Sequence[int], query: np.ndarray) -> dict[int, float]:
        """Cosine of the query with each of these ids that is present."""
        with self._lock:
            rows = rows_of(self._ids[: self._n], np.asarray(ids, dtype=np.int64)) if self._n else []
            if not len(rows):
                return {}
            scores = self._m[rows] @ query
            found = self._ids[rows]
        return dict(zip(found.tolist(), scores.tolist(), strict=True))
