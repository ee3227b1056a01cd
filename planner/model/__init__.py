"""The model seam: `ChatModel` (base.py), which everything above talks to; `Ollama` (client.py), the real server,
whose transport faults each become one line; `ScriptedModel` (scripted.py), the same answers in this process."""
