"""Chat templates rendered by bitlearn against Python's jinja2, byte for byte.

Usage: chat_template_test.py BITLEARN [PYTHON ...]

Renders every template below for every conversation with jinja2 set up as transformers'
apply_chat_template sets it up (ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, a
raise_exception global that raises, a tojson filter that is json.dumps(x, ensure_ascii=False,
indent=indent)), with and without add_generation_prompt, and compares the text with `bitlearn
tokenizer chat --template FILE`. Where jinja2 fails (raise_exception, an undefined value), bitlearn
must fail too: exit code 2 and, for raise_exception, its message. Templates bitlearn must refuse
(a syntax error, an unsupported statement or filter) must exit 2 naming the line.

The templates are written for this test in the style of the chat templates of the model families
bitlearn loads (ChatML/Qwen2, Llama 2, Llama 3, Mistral, Gemma, Phi-3), plus templates that
exercise the rest of the supported subset. When this Python has no jinja2, the PYTHON arguments are
tried in turn; with none that has it the test is skipped (exit code 77).
"""
import json
import os
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
if "BITLEARN_PEER_PYTHON" not in os.environ:
    # The first of the given Pythons (then this one) that has jinja2 runs the test.
    for python in sys.argv[2:] + [sys.executable]:
        if os.path.exists(python) and subprocess.run([python, "-c", "import jinja2"], capture_output=True).returncode == 0:
            os.environ["BITLEARN_PEER_PYTHON"] = python
            os.execv(python, [python, os.path.abspath(__file__), BIN])
    print("SKIP: no Python here has jinja2 (pip install jinja2==3.1.6; scripts/install-deps.sh puts it in build/venv)")
    sys.exit(77)
import jinja2  # noqa: E402
import jinja2.sandbox  # noqa: E402

BOS, EOS = "<s>", "</s>"

TEMPLATES = {
    # ChatML as Qwen2 writes it: a default system prompt when the conversation has none.
    "chatml_qwen2": """{% for message in messages %}
{% if loop.first and messages[0]['role'] != 'system' %}
{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
{% endif %}
{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}
{% endfor %}
{% if add_generation_prompt %}
{{ '<|im_start|>assistant\\n' }}
{% endif %}
""",
    # Llama 2: the system prompt folded into the first user turn, roles must alternate.
    "llama2": """{% if messages[0]['role'] == 'system' %}
{% set loop_messages = messages[1:] %}
{% set system_message = messages[0]['content'] %}
{% else %}
{% set loop_messages = messages %}
{% set system_message = false %}
{% endif %}
{% for message in loop_messages %}
{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
{% endif %}
{% if loop.index0 == 0 and system_message != false %}
{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}
{% else %}
{% set content = message['content'] %}
{% endif %}
{% if message['role'] == 'user' %}
{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}
{% elif message['role'] == 'assistant' %}
{{ ' '  + content.strip() + ' ' + eos_token }}
{% endif %}
{% endfor %}
""",
    # Llama 3: header tokens, `set` of the message text, bos_token once.
    "llama3": """{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}""",
    # Mistral: [INST] turns, a system message prepended to the last user turn.
    "mistral": """{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.last and system_message is defined %}
            {{- '[INST] ' + system_message + '\\n\\n' + message['content'] + '[/INST]' }}
        {%- else %}
            {{- '[INST] ' + message['content'] + '[/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token}}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %}
""",
    # Gemma: <start_of_turn>, assistant named model, no system role.
    "gemma": """{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}""",
    # Phi-3: <|user|> / <|assistant|> / <|end|>.
    "phi3": """{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}""",
    # Qwen3 style: the last user query found from the end (messages[::-1], namespace), reasoning
    # split off assistant turns, tool responses grouped with previtem/nextitem.
    "qwen3_style": """{%- if messages[0].role == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- set content = message.content if message.content is string else '' %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if '</think>' in content %}
            {%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\\n' + content }}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (loop.previtem.role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (loop.nextitem.role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- endif %}
{%- endif %}
""",
    # Llama 3.1 style: a dated system header, the system message taken out of the list with trim.
    "llama31_style": """{{- bos_token }}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{{- "Cutting Knowledge Date: December 2023\\n" }}
{{- "Today Date: " + date_string + "\\n\\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
""",
    # namespace() carried out of a loop, loop.first/last/index, for-else, loop filter.
    "namespace_loop": """{% set ns = namespace(system='', turns=0, last_user=-1) %}
{% for m in messages %}
  {% if m.role == 'system' %}
    {% set ns.system = m.content %}
  {% else %}
    {% set ns.turns = ns.turns + 1 %}
  {% endif %}
  {% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}
{% endfor %}
system={{ ns.system }} turns={{ ns.turns }} last_user={{ ns.last_user }}
{% for m in messages if m.role != 'system' %}
[{{ loop.index }}/{{ loop.length }}{% if loop.first %} first{% endif %}{% if loop.last %} last{% endif %} rev{{ loop.revindex0 }}] {{ m.role }}: {{ m.content }}
{% else %}
(no turns)
{% endfor %}
{% for m in messages[1:] %}{{ m.role[0] }}{% endfor %}|{{ messages[-1].role if messages else 'none' }}
""",
    # Whitespace control, comments, lstrip/trim of indented blocks.
    "whitespace": """{# a comment at the start #}
<start>
  {%- for m in messages %}
    {# indented comment #}
    <{{- m.role -}}>
      {{ m.content }}
    {%+ if loop.last %}(end){% endif %}
  {% endfor -%}
  tail  {{- ' x ' -}}  {{ ' y ' }}
{%- if add_generation_prompt -%}
   <assistant>
{%- endif %}
""",
    # String methods, filters, ternaries, ~ % //, in / not in, literals.
    "expressions": """{% set roles = ['user', 'assistant'] %}
{% set names = {'user': 'U', 'assistant': 'A', 'system': 'S'} %}
{% for m in messages %}
{{ names[m.role] ~ ':' ~ m.content.strip().upper() | replace('  ', ' ') }}|{{ m.content.split(' ') | length }}|{{ m.content.split() | join('+') }}|{{ m.content | length }}
{{ 'known' if m.role in roles else 'other' }} {{ 'not-sys' if m.role not in ['system'] else 'sys' }} {{ m.content.startswith('Hi') }} {{ m.content.endswith('?') }} {{ m.content.lstrip('H').rstrip('!?.') }}
{{ loop.index0 // 2 }} {{ loop.index0 % 3 }} {{ 7 / 2 }} {{ 2 * 3 + 1 }} {{ -loop.index }} {{ 'ab' * 2 }} {{ (loop.index0 + 1) * 1.5 }}
{% endfor %}
{{ messages | length }} {{ roles | join(', ') }} {{ roles | first }} {{ roles | last }} {{ roles | reverse | join }}
{{ undefined_thing | default('dflt') }} {{ '' | default('empty', true) }} {{ none_value is none }} {{ names | length }}
{{ 'a' ~ 1 ~ none ~ true }} {{ [1, 2] + [3] }} {{ {'k': 'v', 'n': [1, 'two', none, false]} }} {{ 1 == 1.0 }} {{ 'b' > 'a' }} {{ 3 >= 4 or 2 <= 2 and not false }}
""",
    # is defined / is not none / tests, elif/else chains, tojson with and without indent.
    "tests_tojson": """{% set extra = none %}
{% if tools is defined %}tools{% elif extra is not none %}extra{% else %}plain{% endif %}
{% if extra is none and undefined_var is not defined %}none+undef{% endif %}
{{ messages | tojson }}
{{ messages[0] | tojson(indent=2) }}
{{ {'a': 1, 'b': [true, none, 2.5, 'é"\\\\'], 'c': {}} | tojson(indent=4) }}
{{ messages[0].content | tojson }} {{ [] | tojson }} {{ 3 | tojson }}
{% for m in messages %}
{% if m.content is string and m.role is string %}{{ loop.index }}{% endif %}
{% if m is mapping %}m{% endif %}{% if messages is iterable %}i{% endif %}{% if loop.index is number %}n{% endif %}
{% endfor %}
{% for key, value in messages[0].items() %}{{ key }}={{ value }};{% endfor %}
""",
    # set inside a loop does not leak out (Jinja's scoping); set inside if does.
    "scoping": """{% set counter = 0 %}
{% set label = 'outer' %}
{% for m in messages %}
{% set counter = counter + 1 %}
{% set label = 'inner' ~ loop.index %}
in-loop counter={{ counter }} label={{ label }}
{% endfor %}
after counter={{ counter }} label={{ label }}
{% if messages %}{% set label = 'from-if' %}{% endif %}
after-if label={{ label }}
{% for outer in [1, 2] %}{% for inner in ['a', 'b'] %}{{ outer }}{{ inner }}{{ loop.index }}{% endfor %}{{ loop.index }} {% endfor %}
""",
    # Case, length, index and slice of non-ASCII text (Python counts characters, not bytes).
    "unicode_text": """{% for m in messages %}
{{ m.content.upper() }}|{{ m.content.lower() }}|{{ m.content | upper }}|{{ m.content | lower }}|{{ m.content | capitalize }}
{{ m.content | length }}|{{ m.content[0] }}|{{ m.content[-1] }}|{{ m.content[1:4] }}|{{ m.content[-3:] }}|{{ m.content | first }}|{{ m.content | reverse }}
{% for ch in m.content[:3] %}<{{ ch }}>{% endfor %}

{% endfor %}
""",
    # Precedence as Jinja's (tests and filters bind to the operand, ~ tighter than + -), float
    # repr, repr escapes in lists, string-literal escapes, slice steps, loop.previtem/nextitem, **,
    # Jinja's title filter against str.title().
    "corners": r"""{{ 1 + 2 is number }} {{ -3 | string }} {{ 'a' ~ 'b' is string }} {{ -(messages | length) }} {{ 2 * 3 ~ 'x' }} {{ 'x' ~ 2 * 3 }} {{ (1 + 2) ~ '' ~ 3 }}
{{ 1.0 }} {{ 1e3 }} {{ 0.1 + 0.2 }} {{ 1000000000000000.0 }} {{ 1e16 }} {{ 10 / 4 }} {{ 3 // 2.0 }} {{ 1e-5 }} {{ 0.0001 }} {{ 123456.789e3 }} {{ -2.5e-7 }} {{ 1.5e300 }} {{ -0.0 }}
{{ "it's" }} {{ ['it\'s', "a\"b", 'x\ty', 'a\\b', '\x01', 'q\r'] }} {{ '\u00e9\x41\101\U0001F600' }} {{ '\d\w' }}
{{ 7 % 3 }} {{ -7 % 3 }} {{ -7 // 2 }} {{ 2 ** 3 }} {{ 2 ** -1 }} {{ 3 ** -2 }} {{ 2 ** 3 ** 2 }} {{ 7.5 % 2 }}
{{ 'abcdef'[::-1] }} {{ 'abcdef'[::2] }} {{ 'abcdef'[4:1:-1] }} {{ [1, 2, 3, 4][-1:0:-2] }} {{ 'abc'[-10:10] }} {{ 'abc'[5:-9:-1] }}
{{ "o'neil mc(x) [y] <z>-w" | title }} {{ "o'neil mc(x)".title() }}
{{ 'a' == 'a' == 'a' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 1 > 0 }} {{ 1 < 3 > 2 }} {{ 1 < 2 > 3 }} {{ 'abc' | join('-') }} {{ ' xax ' | trim('x ') }}
{% if true +%}
kept newline after +%}
{% endif %}
{% for m in messages[::-1] %}
{% set index = (messages | length - 1) - loop.index0 %}
{{ index }}:{{ m.role }} prev={{ loop.previtem.role if loop.previtem is defined else '-' }} next={{ loop.nextitem.role if loop.nextitem is defined else '-' }}
{% endfor %}
""",
    # Failures jinja2 has too: looping over none, an attribute of an undefined value.
    "fails_like_jinja": """{% for m in messages %}{{ m.role }}{% endfor %}
{% if messages | length > 2 %}{{ messages[0].nope.deeper }}{% endif %}
{% for x in none %}x{% endfor %}
""",
    # raise_exception on a condition (both engines must fail with the message).
    "raise": """{% for m in messages %}
{% if m.role == 'system' %}
{{ raise_exception('system messages are not allowed here') }}
{% endif %}
{{ m.role }}: {{ m.content }}
{% endfor %}
""",
}

CONVERSATIONS = {
    "one_user": [{"role": "user", "content": "Hi there!"}],
    "system_user": [{"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "What is 2+2?"}],
    "multi_turn": [{"role": "user", "content": "Hi  there, how are you?"},
                   {"role": "assistant", "content": " Fine, thanks. "},
                   {"role": "user", "content": "Tell me a joke."}],
    "system_multi": [{"role": "system", "content": "Be kind.\nAlways."},
                     {"role": "user", "content": "Héllo wörld — ünïcode ✓"},
                     {"role": "assistant", "content": "Hello!"},
                     {"role": "user", "content": "Bye?"}],
    "bad_order": [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}],
    "letters": [{"role": "user", "content": "ÿ Ăă Ĺĺ Łł Ŋŋ Źź Ωω Σσς Жж Ёё µ ß 日本語 😀 — ok"},
                {"role": "assistant", "content": "çA va? ÉTÉ"}],
    "tools_and_thinking": [{"role": "system", "content": "Use tools."},
                           {"role": "user", "content": "Weather?"},
                           {"role": "assistant", "content": "<think>\nneed a tool\n</think>\n\ncalling"},
                           {"role": "tool", "content": "sunny"},
                           {"role": "tool", "content": "22 C"},
                           {"role": "assistant", "content": "<think>ok</think>It is sunny."},
                           {"role": "user", "content": "<tool_response>x</tool_response>"}],
    "empty_content": [{"role": "user", "content": ""}, {"role": "assistant", "content": "  \n "}],
}

# Templates bitlearn must refuse, with the line of the fault.
REFUSED = {
    "unclosed_tag": ("line one\n{% if messages %}\nx\n{{ messages | length\n", "line 4"),
    "unknown_statement": ("a\nb\n{% macro m() %}{% endmacro %}\n", "line 3"),
    "unsupported_filter": ("{% for m in messages %}\n{{ m.content | wordwrap(10) }}\n{% endfor %}\n", "line 2"),
    "missing_endif": ("{% if true %}\nx\n", "endif"),
    "stray_endfor": ("x\n{% endfor %}\n", "line 2"),
    "filter_in_branch_not_taken": ("{% if false %}\n\n{{ messages | map(attribute='role') | join }}\n{% endif %}\n", "line 3"),
    "unsupported_test": ("{{ 'x' }}\n{{ 3 is divisibleby(3) }}\n", "line 2"),
    # A float power would go through the C library's pow (its last digit differs by library).
    "float_power": ("{{ 1 }}\n{{ 2 ** 0.5 }}\n", "line 2"),
}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception

failures = []
compared = 0
rendered = {}  # template -> renderings jinja2 completed (the rest failed in both)
tmp = tempfile.mkdtemp()


def ours(template_path, messages_path, generation_prompt):
    args = [BIN, "tokenizer", "chat", "--template", template_path, "--bos", BOS, "--eos", EOS,
            "--messages", messages_path]
    if generation_prompt:
        args.append("--generation-prompt")
    return subprocess.run(args, capture_output=True)


for cname, conv in CONVERSATIONS.items():
    with open(os.path.join(tmp, cname + ".json"), "w", encoding="utf-8") as f:
        json.dump(conv, f, ensure_ascii=False)

for tname, source in TEMPLATES.items():
    tpath = os.path.join(tmp, tname + ".jinja")
    with open(tpath, "w", encoding="utf-8") as f:
        f.write(source)
    compiled = env.from_string(source)
    for cname, conv in CONVERSATIONS.items():
        for gp in (False, True):
            what = f"{tname} x {cname} (add_generation_prompt={gp})"
            try:
                want, want_error = compiled.render(messages=conv, add_generation_prompt=gp, bos_token=BOS,
                                                   eos_token=EOS), None
            except Exception as e:  # any failure of jinja2 (TemplateError, TypeError, ...) must be one of ours
                want, want_error = None, e
            got = ours(tpath, os.path.join(tmp, cname + ".json"), gp)
            compared += 1
            if want_error is None:
                rendered[tname] = rendered.get(tname, 0) + 1
                text = got.stdout.decode("utf-8", "replace")
                if got.returncode != 0 or got.stdout != want.encode("utf-8"):
                    failures.append(what)
                    print(f"FAIL: {what}: exit {got.returncode} {got.stderr.decode()!r}\n  jinja2:   {want!r}\n  bitlearn: {text!r}")
            else:
                err = got.stderr.decode("utf-8", "replace")
                message = str(want_error) if type(want_error) is jinja2.exceptions.TemplateError else ""
                if got.returncode != 2 or message not in err:
                    failures.append(what)
                    print(f"FAIL: {what}: jinja2 raised {type(want_error).__name__}: {want_error}; bitlearn exit "
                          f"{got.returncode}, stderr {err!r}, stdout {got.stdout[:200]!r}")

# Every template but those written to fail renders some conversation (no template passes by failing
# in both engines everywhere).
for tname in TEMPLATES:
    if tname != "fails_like_jinja" and rendered.get(tname, 0) == 0:
        failures.append(tname)
        print(f"FAIL: {tname} renders no conversation in jinja2")
both_failed = len(TEMPLATES) * len(CONVERSATIONS) * 2 - sum(rendered.values())
print("renderings per template (of", 2 * len(CONVERSATIONS), "):", ", ".join(f"{t} {rendered.get(t, 0)}" for t in TEMPLATES))

for rname, (source, words) in REFUSED.items():
    tpath = os.path.join(tmp, rname + ".jinja")
    with open(tpath, "w", encoding="utf-8") as f:
        f.write(source)
    got = ours(tpath, os.path.join(tmp, "one_user.json"), False)
    err = got.stderr.decode("utf-8", "replace")
    compared += 1
    if got.returncode != 2 or words not in err:
        failures.append(rname)
        print(f"FAIL: {rname}: exit {got.returncode}, stderr {err!r} lacks {words!r}")

# Bad input to the command: exit 2 with a message.
with open(os.path.join(tmp, "bad.json"), "w") as f:
    f.write('[{"role": "user"')
with open(os.path.join(tmp, "nocontent.json"), "w") as f:
    f.write('[{"role": "user"}]')
for args, words in [(["--template", os.path.join(tmp, "chatml_qwen2.jinja"), "--messages", os.path.join(tmp, "bad.json")], "not valid JSON"),
                    (["--template", os.path.join(tmp, "chatml_qwen2.jinja"), "--messages", os.path.join(tmp, "nocontent.json")], "message 0"),
                    (["--template", os.path.join(tmp, "absent.jinja"), "--messages", os.path.join(tmp, "one_user.json")], "absent.jinja"),
                    (["--model", tmp, "--messages", os.path.join(tmp, "one_user.json")], "no chat template")]:
    got = subprocess.run([BIN, "tokenizer", "chat", *args], capture_output=True)
    if got.returncode != 2 or words not in got.stderr.decode():
        failures.append(" ".join(args))
        print(f"FAIL: {args}: exit {got.returncode}, stderr {got.stderr.decode()!r} lacks {words!r}")

print(f"{len(TEMPLATES)} templates x {len(CONVERSATIONS)} conversations x 2 (generation prompt), "
      f"{len(REFUSED)} refused templates: {compared} comparisons with jinja2 {jinja2.__version__} ({sys.executable}); "
      f"{sum(rendered.values())} renderings equal, {both_failed} failing in both")
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("PASS: chat templates match jinja2")
