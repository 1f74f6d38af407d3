"""`bitlearn serve` end to end over loopback, with Python's own HTTP client.

Usage: serve_test.py BITLEARN HF_FIXTURES

Starts the server on a free port, checks each endpoint against `bitlearn generate` (the same
request gives the same tokens and text; `tokens_sha256` is the hash of `generate --ids` output),
checks that a list of prompts gives each prompt's tokens as alone, that a stream concatenates to
the whole answer, that bad requests get a 400 with a message, and that SIGTERM ends the server
with exit code 0. Then chat completions on a copy of the model folder with a ChatML chat template
(tokenizer_config.json): a chat request gives the tokens of /v1/completions with the ids of the
rendered prompt (`bitlearn tokenizer chat --ids`), its stream's deltas concatenate to the message,
a raise_exception of the template is a 400 with its message, and a model without a template
answers 501. Then tools, on a copy with a template in the style of Qwen2.5's tool use: the
rendering of tools, an assistant tool call (OpenAI's wire format) and a tool result is jinja2's
(when this Python has jinja2) and gives the tokens of `bitlearn generate --messages`; tool_choice
"none" renders no tools; unsupported tool options, image parts and unknown parts are 400s naming
them; a template without tools refuses them.
"""
import hashlib
import http.client
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile

BIN, HF = sys.argv[1], sys.argv[2]
MODEL = os.path.join(HF, "llama")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def generate(*args):
    out = subprocess.run([BIN, "generate", "--model", MODEL, *args], capture_output=True, text=True, check=True)
    return out.stdout.rstrip("\n")


def ids_sha256(ids):
    return hashlib.sha256(b"".join(struct.pack("<i", i) for i in ids)).hexdigest()


def start(model):
    proc = subprocess.Popen([BIN, "serve", "--model", model, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    print(first.strip())
    return proc, int(first.split("http://127.0.0.1:")[1].split(" ")[0])


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = "hung"
    return code, proc.stderr.read()


server, port = start(MODEL)


def request(method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read().decode()
    conn.close()
    return r.status, r.getheader("Content-Type"), data


try:
    status, _, data = request("GET", "/health")
    check(status == 200 and json.loads(data) == {"status": "ok"}, "/health")
    status, _, data = request("GET", "/v1/models")
    check(status == 200 and json.loads(data)["data"][0]["id"] == "llama", "/v1/models names the model")

    # Greedy: the text and the tokens of `bitlearn generate`.
    prompt = "def main():"
    status, _, data = request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 8, "temperature": 0})
    check(status == 200, f"completion status {status}: {data}")
    r = json.loads(data)
    ch = r["choices"][0]
    check(r["usage"]["completion_tokens"] == len(ch["token_ids"]) == 8, "usage counts the 8 tokens")
    text_alone = generate("--prompt", prompt, "--max-new-tokens", "8")
    check(text_alone.endswith(ch["text"]) and len(ch["text"]) > 0,
          f"text {ch['text']!r} is what generate prints ({text_alone!r})")
    check(ch["finish_reason"] == "length", "finish_reason length")

    # A prompt of token ids: the same tokens as `generate --ids`, and tokens_sha256 its hash.
    pids = [1, 17, 42, 7]
    status, _, data = request("POST", "/v1/completions", {"prompt": pids, "max_tokens": 6})
    r = json.loads(data)
    whole = [int(t) for t in generate("--ids", ",".join(map(str, pids)), "--max-new-tokens", "6").split(",")]
    check(status == 200 and pids + r["choices"][0]["token_ids"] == whole, "id prompt gives generate --ids tokens")
    check(r["choices"][0]["tokens_sha256"] == ids_sha256(whole), "tokens_sha256 is the hash of the whole sequence")

    # Sampling with a seed: replayed twice, and equal to generate with the same seed.
    body = {"prompt": pids, "max_tokens": 6, "temperature": 0.9, "top_k": 20, "seed": 7}
    a = json.loads(request("POST", "/v1/completions", body)[2])["choices"][0]
    b = json.loads(request("POST", "/v1/completions", body)[2])["choices"][0]
    sampled = [int(t) for t in generate("--ids", ",".join(map(str, pids)), "--max-new-tokens", "6",
                                        "--temperature", "0.9", "--top-k", "20", "--seed", "7").split(",")]
    check(a["tokens_sha256"] == b["tokens_sha256"] == ids_sha256(sampled), "a seeded sample replays and equals generate")

    # A list of prompts: one choice each, each with the tokens of the prompt alone.
    prompts = ["def main():", "import os", "x = 1"]
    status, _, data = request("POST", "/v1/completions", {"prompt": prompts, "max_tokens": 5})
    r = json.loads(data)
    check(status == 200 and [c["index"] for c in r["choices"]] == [0, 1, 2], "three choices")
    for i, p in enumerate(prompts):
        alone = json.loads(request("POST", "/v1/completions", {"prompt": p, "max_tokens": 5})[2])["choices"][0]
        check(r["choices"][i]["tokens_sha256"] == alone["tokens_sha256"], f"prompt {i} in a list = alone")

    # Streaming: server-sent events whose pieces concatenate to the whole text.
    status, ctype, data = request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 8, "stream": True})
    events = [l[len("data: "):] for l in data.split("\n") if l.startswith("data: ")]
    check(status == 200 and ctype.startswith("text/event-stream") and events[-1] == "[DONE]", "stream ends with [DONE]")
    chunks = [json.loads(e) for e in events[:-1]]
    streamed = "".join(c["choices"][0]["text"] for c in chunks)
    whole_text = json.loads(request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 8})[2])["choices"][0]
    check(streamed == whole_text["text"], f"stream {streamed!r} = whole {whole_text['text']!r}")
    check(chunks[-1]["choices"][0]["tokens_sha256"] == whole_text["tokens_sha256"], "stream's last event has the hash")

    # Stop strings end the text before them.
    cut = whole_text["text"][2:4]
    if cut:
        r = json.loads(request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 8, "stop": cut})[2])
        check(r["choices"][0]["text"] == whole_text["text"][:whole_text["text"].find(cut)] and
              r["choices"][0]["finish_reason"] == "stop", "stop string cuts the text")

    # Bad requests: 400 with a message; unknown paths 404; chat 501.
    for body, words in [("not json", "not JSON"), ({}, "'prompt' is missing"),
                        ({"prompt": "x", "max_tokens": -1}, "'max_tokens' = -1 is out of range"),
                        ({"prompt": "x", "max_tokens": 1e300}, "'max_tokens': expected an integer"),
                        ({"prompt": "x", "temperature": -1}, "'temperature'"),
                        ({"prompt": "x", "top_p": 0}, "'top_p'"),
                        ({"prompt": [1, 99999999]}, "outside the vocabulary"),
                        ({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}, "'stop'"),
                        ({"prompt": "x", "n": 2}, "'n' must be 1"),
                        ({"prompt": ["a", "b"], "stream": True}, "'stream' takes one prompt")]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/v1/completions", body=body if isinstance(body, str) else json.dumps(body))
        resp = conn.getresponse()
        data = resp.read().decode()
        check(resp.status == 400 and words in json.loads(data)["error"]["message"], f"{body!r}: {resp.status} {data}")
    status, _, data = request("GET", "/v1/nothing")
    check(status == 404 and "no endpoint" in data, "404 names the path")
    status, _, data = request("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
    check(status == 501 and "no chat template" in data, f"a model without a chat template says so: {status} {data}")
finally:
    code, err = stop(server)
check(code == 0, f"SIGTERM ends the server with exit 0 (got {code}; stderr {err[-300:]!r})")

# Chat completions: the llama fixture in a folder of links, with a ChatML template.
CHATML = ("{% for message in messages %}{% if message['role'] == 'bad' %}{{ raise_exception('no bad roles here') }}"
          "{% endif %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
chat_dir = os.path.join(tempfile.mkdtemp(), "llama-chat")
os.mkdir(chat_dir)
for name in ("config.json", "model.safetensors", "generation_config.json"):
    os.symlink(os.path.abspath(os.path.join(MODEL, name)), os.path.join(chat_dir, name))
os.symlink(os.path.abspath(os.path.join(HF, "tokenizer.json")), os.path.join(chat_dir, "tokenizer.json"))
with open(os.path.join(chat_dir, "tokenizer_config.json"), "w") as f:
    json.dump({"chat_template": CHATML, "bos_token": "<s>", "eos_token": "<|im_end|>"}, f)
messages = [{"role": "system", "content": "You write code."}, {"role": "user", "content": "def main():"}]
with open(os.path.join(chat_dir, "..", "messages.json"), "w") as f:
    json.dump(messages, f)
rendered = subprocess.run([BIN, "tokenizer", "chat", "--model", chat_dir, "--messages",
                           os.path.join(chat_dir, "..", "messages.json"), "--generation-prompt"],
                          capture_output=True, text=True, check=True).stdout
check(rendered == "<|im_start|>system\nYou write code.<|im_end|>\n<|im_start|>user\ndef main():<|im_end|>\n"
      "<|im_start|>assistant\n", f"tokenizer chat renders the ChatML prompt: {rendered!r}")
chat_ids = [int(t) for t in subprocess.run([BIN, "tokenizer", "chat", "--model", chat_dir, "--messages",
                                            os.path.join(chat_dir, "..", "messages.json"), "--generation-prompt",
                                            "--ids"], capture_output=True, text=True, check=True).stdout.split(",")]
server, port = start(chat_dir)
try:
    body = {"messages": messages, "max_tokens": 8, "temperature": 0}
    status, _, data = request("POST", "/v1/chat/completions", body)
    check(status == 200, f"chat status {status}: {data}")
    r = json.loads(data)
    ch = r["choices"][0]
    check(r["object"] == "chat.completion" and ch["message"]["role"] == "assistant", "chat.completion, assistant message")
    plain = json.loads(request("POST", "/v1/completions", {"prompt": chat_ids, "max_tokens": 8, "temperature": 0})[2])
    pc = plain["choices"][0]
    check(ch["token_ids"] == pc["token_ids"] and ch["tokens_sha256"] == pc["tokens_sha256"],
          "chat gives the tokens of /v1/completions with the rendered prompt's ids")
    check(ch["message"]["content"] == pc["text"], f"chat message {ch['message']['content']!r} = completion {pc['text']!r}")
    check(r["usage"]["prompt_tokens"] == len(chat_ids), "usage counts the rendered prompt")
    # Content as a list of text parts renders the same.
    parts = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in messages]
    r2 = json.loads(request("POST", "/v1/chat/completions", {**body, "messages": parts})[2])
    check(r2["choices"][0]["tokens_sha256"] == ch["tokens_sha256"], "content parts = content text")
    # Sampled with a seed: the same as the completion of the ids with the same seed.
    sampled = {"max_tokens": 6, "temperature": 0.9, "top_k": 20, "seed": 3}
    a = json.loads(request("POST", "/v1/chat/completions", {"messages": messages, **sampled})[2])["choices"][0]
    b = json.loads(request("POST", "/v1/completions", {"prompt": chat_ids, **sampled})[2])["choices"][0]
    check(a["tokens_sha256"] == b["tokens_sha256"], "a seeded chat sample = the seeded completion")
    # Streaming: chat.completion.chunk events whose deltas concatenate to the message.
    status, ctype, data = request("POST", "/v1/chat/completions", {**body, "stream": True})
    events = [l[len("data: "):] for l in data.split("\n") if l.startswith("data: ")]
    check(status == 200 and ctype.startswith("text/event-stream") and events[-1] == "[DONE]", "chat stream ends with [DONE]")
    chunks = [json.loads(e) for e in events[:-1]]
    check(all(c["object"] == "chat.completion.chunk" for c in chunks), "chunks are chat.completion.chunk")
    check(chunks[0]["choices"][0]["delta"].get("role") == "assistant", "the first delta names the role")
    streamed = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    check(streamed == ch["message"]["content"], f"chat stream {streamed!r} = message {ch['message']['content']!r}")
    check(chunks[-1]["choices"][0]["tokens_sha256"] == ch["tokens_sha256"] and
          chunks[-1]["choices"][0]["finish_reason"] == ch["finish_reason"], "the last chunk has the hash and finish reason")
    # Bad chat requests: 400 naming the problem.
    for bad, words in [({}, "'messages' is missing"), ({"messages": []}, "non-empty list"),
                       ({"messages": [{"content": "x"}]}, "needs a text 'role'"),
                       ({"messages": [{"role": "user", "content": 3}]}, "'content' must be"),
                       ({"messages": messages, "echo": True}, "'echo'"),
                       ({"messages": messages, "temperature": -1}, "'temperature'"),
                       ({"messages": [{"role": "bad", "content": "x"}]}, "no bad roles here")]:
        status, _, data = request("POST", "/v1/chat/completions", bad)
        check(status == 400 and words in json.loads(data)["error"]["message"], f"chat {bad!r}: {status} {data}")
finally:
    code, err = stop(server)
check(code == 0, f"SIGTERM ends the chat server with exit 0 (got {code}; stderr {err[-300:]!r})")
# Tools: a copy of the folder with a template in the style of Qwen2.5's tool use (the tools with
# tojson, tool calls after <tool_call>, consecutive tool results grouped in one user turn), with
# short markers: the fixture model has 128 positions and a byte-level vocabulary.
TOOLS_TEMPLATE = (
    "{%- if tools %}{%- for tool in tools %}{{- tool | tojson }}{%- endfor %}{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}"
    "{{- '<' + message.role[0] + '>' + message.content + '</>' }}"
    "{%- elif message.role == 'assistant' %}{{- '<a>' }}{%- if message.content %}{{- message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '<tool_call>' + tool_call.name + tool_call.arguments | tojson }}"
    "{%- endfor %}{{- '</>' }}"
    "{%- elif message.role == 'tool' %}{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<u>' }}{%- endif %}"
    "{{- '<r>' + message.content }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '</>' }}{%- endif %}{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<a>' }}{%- endif %}")
tools_dir = os.path.join(tempfile.mkdtemp(), "llama-tools")
os.mkdir(tools_dir)
for name in ("config.json", "model.safetensors", "generation_config.json"):
    os.symlink(os.path.abspath(os.path.join(MODEL, name)), os.path.join(tools_dir, name))
os.symlink(os.path.abspath(os.path.join(HF, "tokenizer.json")), os.path.join(tools_dir, "tokenizer.json"))
with open(os.path.join(tools_dir, "tokenizer_config.json"), "w") as f:
    json.dump({"chat_template": TOOLS_TEMPLATE, "eos_token": "<|im_end|>"}, f)
TOOLS = [{"type": "function", "function": {"name": "w"}}]  # short: the model has 128 positions
# A conversation in OpenAI's wire format: an assistant tool call (arguments as JSON text, content
# null), the tool's result, then the user again.
tool_messages = [{"role": "user", "content": "x"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{\"c\": 2}"}}]},
                 {"role": "tool", "tool_call_id": "call_1", "name": "w", "content": "3"},
                 {"role": "user", "content": "d"}]
tool_body = {"messages": tool_messages, "tools": TOOLS, "max_tokens": 8, "temperature": 0}
request_file = os.path.join(tools_dir, "..", "request.json")
with open(request_file, "w") as f:
    json.dump(tool_body, f)


def generate_messages(*args):
    out = subprocess.run([BIN, "generate", "--model", tools_dir, "--max-new-tokens", "8", "--temperature", "0", "--jsonl", *args],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"generate {args}: {out.stderr}")
    return json.loads(out.stdout) if out.returncode == 0 else {}


cli = generate_messages("--messages", request_file)
want_prompt = '{"type": "function", "function": {"name": "w"}}<u>x</><a><tool_call>w{"c": 2}</><u><r>3</><u>d</><a>'
check(cli.get("prompt") == want_prompt, f"generate --messages renders tools, the call and its result: {cli.get('prompt')!r}")
try:
    import jinja2.sandbox  # the peer: the same template in jinja2 as transformers sets it up
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)
    peer_messages = json.loads(json.dumps(tool_messages))
    peer_messages[1]["tool_calls"][0]["function"]["arguments"] = {"c": 2}  # as transformers' docs pass them
    peer = env.from_string(TOOLS_TEMPLATE).render(messages=peer_messages, tools=TOOLS, add_generation_prompt=True)
    check(peer == cli.get("prompt"), f"the rendering is jinja2's: {peer!r}")
except ImportError:
    print("note: no jinja2 in this Python; the tools rendering is checked against the written text only")
with open(os.path.join(tools_dir, "..", "messages.json"), "w") as f:
    json.dump(tool_messages, f)
with open(os.path.join(tools_dir, "..", "tools.json"), "w") as f:
    json.dump(TOOLS, f)
cli2 = generate_messages("--messages", os.path.join(tools_dir, "..", "messages.json"), "--tools", os.path.join(tools_dir, "..", "tools.json"))
check(cli2.get("tokens_sha256") == cli.get("tokens_sha256"), "--messages LIST --tools FILE = --messages REQUEST")
no_tools = generate_messages("--messages", os.path.join(tools_dir, "..", "messages.json"))
for args, words in [(["--tools", os.path.join(tools_dir, "..", "tools.json"), "--prompt", "x"], "--tools needs --messages"),
                    (["--messages", request_file, "--prompt", "x"], "--messages is the whole prompt"),
                    (["--messages", os.path.join(tools_dir, "..", "tools.json")], "needs a text 'role'")]:
    out = subprocess.run([BIN, "generate", "--model", tools_dir, *args], capture_output=True, text=True)
    check(out.returncode != 0 and words in out.stderr, f"generate {args}: exit {out.returncode}, {out.stderr!r} lacks {words!r}")

server, port = start(tools_dir)
try:
    status, _, data = request("POST", "/v1/chat/completions", tool_body)
    check(status == 200, f"chat with tools: {status} {data}")
    ch = json.loads(data)["choices"][0] if status == 200 else {}
    check(ch.get("tokens_sha256") == cli.get("tokens_sha256") and ch.get("token_ids") == cli.get("token_ids"),
          "chat with tools gives the tokens of generate --messages")
    # The tiny model writes no <tool_call> block: its reply stays text (the parser is tested in C++).
    check("<tool_call>" not in ch["message"]["content"] and "tool_calls" not in ch["message"] and
          ch["finish_reason"] in ("stop", "length"), f"a reply without calls is plain text: {ch}")
    # tool_choice "none": the tools are not rendered (the tokens of the same messages without tools).
    status, _, data = request("POST", "/v1/chat/completions", {**tool_body, "tool_choice": "none"})
    check(status == 200 and json.loads(data)["choices"][0]["tokens_sha256"] == no_tools.get("tokens_sha256"),
          f"tool_choice none renders no tools: {status} {data[:300]}")
    status, _, data = request("POST", "/v1/chat/completions", {**tool_body, "tool_choice": "auto"})
    check(status == 200 and json.loads(data)["choices"][0]["tokens_sha256"] == cli.get("tokens_sha256"), "tool_choice auto")
    image = {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}
    for bad, words in [({**tool_body, "tool_choice": "required"}, "'tool_choice' = \"required\" is not supported"),
                       ({**tool_body, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, "'tool_choice' = {"),
                       ({**tool_body, "stream": True}, "'stream' with 'tools' is not supported"),
                       ({**tool_body, "parallel_tool_calls": False}, "'parallel_tool_calls' = false"),
                       ({**tool_body, "functions": [TOOLS[0]["function"]]}, "'functions'"),
                       ({**tool_body, "tools": [{"type": "code_interpreter"}]}, "'tools'[0] must be"),
                       ({"messages": [image]}, "'messages'[0].content[1]: an image part (\"image_url\"), but this model has no vision input"),
                       ({"messages": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
                        "'messages'[0].content[0]: an image part (\"input_image\")"),
                       ({"messages": [{"role": "user", "content": [{"type": "video", "video": "x"}]}]},
                        "content parts of type \"video\" are not supported"),
                       ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"id": "1"}]}]},
                        "'messages'[1].tool_calls[0] must be")]:
        status, _, data = request("POST", "/v1/chat/completions", bad)
        check(status == 400 and words in json.loads(data)["error"]["message"], f"chat {json.dumps(bad)[:120]}: {status} {data}")
finally:
    code, err = stop(server)
check(code == 0, f"SIGTERM ends the tools server with exit 0 (got {code}; stderr {err[-300:]!r})")

# A template without tools refuses them rather than dropping them; an image is refused there too.
server, port = start(chat_dir)
try:
    status, _, data = request("POST", "/v1/chat/completions", {"messages": messages, "tools": TOOLS})
    check(status == 400 and "does not use tools" in json.loads(data)["error"]["message"], f"tools on a template without: {status} {data}")
    status, _, data = request("POST", "/v1/chat/completions", {"messages": messages, "tools": [], "max_tokens": 2})
    check(status == 200, f"an empty tools list is no tools: {status} {data}")
finally:
    code, err = stop(server)
check(code == 0, f"SIGTERM ends the chat server with exit 0 (got {code})")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("PASS: serve")
