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
answers 501.
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
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("PASS: serve")
