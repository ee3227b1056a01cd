"""Long-term memory by meaning: text to vectors with an Ollama embedding model, and search.

The code is `planner/memory/vectors.py` (the embedder and two indexes: exact
float32 cosine, and a compact 1-bit index with an exact re-rank for large
collections) and `planner/memory/longterm.py` (remember, recall and forget;
recall fuses vector and keyword scores, see planner/memory/scoring.py).
"""

from __future__ import annotations

from planner.memory.compact import CompactIndex
from planner.memory.longterm import LongTermMemory
from planner.memory.vectors import Embedder, VectorIndex

__all__ = ["CompactIndex", "Embedder", "LongTermMemory", "VectorIndex"]
