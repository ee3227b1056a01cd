"""Count prompt tokens offline, exactly as a llama.cpp server counts them: the GGUF's own chat template, then
its own tokenizer. Standalone (no planner import), to run with the Python that has llama-cpp-python, e.g.
the realmodel server's:

    python -m evals tokens --dump /tmp/requests.json            # what this checkout sends (no model)
    ~/.cache/planner-realmodel/venv/bin/python evals/gguf_tokens.py MODEL.gguf /tmp/requests.json > counts.json

Prints JSON: tokens of the system prompt (all of it, and its fixed part), each tool (what adding it to the
list adds; the template's tools header apart), all tools, and each request.
"""

import json
import sys

import jinja2.sandbox
from llama_cpp import Llama


def main(gguf: str, path: str) -> None:
    """Count and print."""
    llm = Llama(model_path=gguf, vocab_only=True, verbose=False)
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(llm.metadata["tokenizer.chat_template"])
    eos = llm._model.token_get_text(llm.token_eos())

    def n(messages: list, tools: list) -> int:
        text = template.render(
            messages=messages, tools=tools or None, add_generation_prompt=True, bos_token="", eos_token=eos
        )
        return len(llm.tokenize(text.encode(), special=True))

    def hi(system: str) -> list:
        return [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]

    d = json.load(open(path))
    bare = n(hi("."), [])
    out = {"system_full": n(hi(d["system_full"]), []) - bare}
    if "system_core" in d:
        out["system_core"] = n(hi(d["system_core"]), []) - bare
    specs, per, prev = d["tools"], {}, bare
    for k in range(1, len(specs) + 1):
        now = n(hi("."), specs[:k])
        per[specs[k - 1]["function"]["name"]] = now - prev
        prev = now
    first = specs[0]["function"]["name"]  # its line carried the tools header: counted again, second
    alone = n(hi("."), [specs[1], specs[0]]) - n(hi("."), [specs[1]])
    out["tools_header"], per[first] = per[first] - alone, alone
    out["tools"], out["all_tools"] = per, n(hi("."), specs) - bare
    out["requests"] = [
        {k: r[k] for k in ("id", "category", "line", "groups")} | {"tokens": n(r["messages"], r["tools"])}
        for r in d["requests"]
    ]
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
