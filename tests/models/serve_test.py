"""`bitlearn serve` end to end over loopback, with Python's own HTTP client.

Usage: serve_test.py BITLEARN HF_FIXTURES

Starts the server on a free port, checks each endpoint against `bitlearn generate` (the same
request gives the same tokens and text; `tokens_sha256` is the hash of `generate --ids` output),
checks that a list of prompts gives each prompt's tokens as alone, that a stream concatenates to
the whole answer, that bad requests get a 400 with a message, and that SIGTERM ends the server
with exit code 0.
"""
import hashlib
import http.client
import json
import os
import signal
import struct
import subprocess
import sys

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


server = subprocess.Popen([BIN, "serve", "--model", MODEL, "--port", "0"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
line = server.stdout.readline()
print(line.strip())
port = int(line.split("http://127.0.0.1:")[1].split(" ")[0])


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
    status, _, data = request("POST", "/v1/chat/completions", {"messages": []})
    check(status == 501 and "chat templates" in data, "chat says it is not supported")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        code = "hung"
    err = server.stderr.read()
check(code == 0, f"SIGTERM ends the server with exit 0 (got {code}; stderr {err[-300:]!r})")
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("PASS: serve")
