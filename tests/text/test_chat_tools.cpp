// Chat templates with tools: ChatTemplate::apply_json (OpenAI messages, tool calls, tool results,
// `tools`), the filters tool templates use (selectattr), content parts, and parse_tool_calls.
//
// The three templates are written for this test in the style of the tool-use chat templates of
// Qwen2.5, Mistral v0.3 and Llama 3.1 (the same constructs: `for tool in tools`, `tool | tojson`,
// tojson(indent=4), `message.tool_calls`, `is defined`, namespace(), selectattr("role", "equalto",
// ...), `'tool_calls' in message`, slices of tojson text, set at the top level). The expected texts
// are jinja2 3.1's renderings with transformers' environment (trim_blocks, lstrip_blocks, tojson =
// json.dumps(ensure_ascii=False)) of the same conversation with the tool-call arguments as an
// object, as transformers' documentation passes them; bitlearn gets them in OpenAI's wire format
// (arguments as JSON text) and must render the same.
#include <gtest/gtest.h>

#include <string>

#include "bitlearn/chat_template.h"
#include "core/error.h"

namespace {

using bl::text::ChatTemplate;

const char* kTools = R"([{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}])";

// OpenAI's wire format: content null beside tool_calls, arguments as JSON text.
const char* kConversation = R"([{"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"}}]},
  {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "22 C, sunny"},
  {"role": "assistant", "content": "Sunny, 22 C."},
  {"role": "user", "content": "Thanks"}])";

const char* kOneUser = R"([{"role": "user", "content": "Weather in Paris?"}])";
const char* kQwen25Style = R"TPL({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each call return <tool_call>{\"name\": <name>, \"arguments\": <args>}</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)TPL";
const char* kMistralStyle = R"TPL({%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("roles must alternate") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}
{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
        {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool" %}
        {{- '[TOOL_RESULTS] {"content": ' + message.content|tojson + ', "call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
)TPL";
const char* kLlama31Style = R"TPL({{- bos_token }}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- if tools_in_user_message and not tools is none %}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
    {%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, respond with a JSON for a function call.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}
{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
)TPL";
// The message text of a bl::Error thrown by f (empty when none is thrown).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const bl::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplateTools, Qwen25StyleMatchesJinja2) {
  const ChatTemplate t = ChatTemplate::from_text(kQwen25Style, "<s>", "</s>");
  EXPECT_TRUE(t.uses_tools());
  EXPECT_EQ(t.apply_json(kConversation, kTools, true),
            R"EXP(<|im_start|>system
Be brief.

# Tools

<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}
</tools>

For each call return <tool_call>{"name": <name>, "arguments": <args>}</tool_call><|im_end|>
<|im_start|>user
Weather in Paris?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
22 C, sunny
</tool_response><|im_end|>
<|im_start|>assistant
Sunny, 22 C.<|im_end|>
<|im_start|>user
Thanks<|im_end|>
<|im_start|>assistant
)EXP");
  EXPECT_EQ(t.apply_json(kOneUser, "", true), R"EXP(<|im_start|>system
You are a helpful assistant.<|im_end|>
<|im_start|>user
Weather in Paris?<|im_end|>
<|im_start|>assistant
)EXP");
}

TEST(ChatTemplateTools, MistralStyleMatchesJinja2) {
  const ChatTemplate t = ChatTemplate::from_text(kMistralStyle, "<s>", "</s>");
  EXPECT_TRUE(t.uses_tools());
  EXPECT_EQ(t.apply_json(kConversation, kTools, true),
            R"EXP(<s>[INST] Weather in Paris?[/INST][TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}, "id": "call12345"}]</s>[TOOL_RESULTS] {"content": "22 C, sunny", "call_id": "call12345"}[/TOOL_RESULTS] Sunny, 22 C.</s>[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}][/AVAILABLE_TOOLS][INST] Be brief.

Thanks[/INST])EXP");
  EXPECT_EQ(t.apply_json(kOneUser, "", true), R"EXP(<s>[INST] Weather in Paris?[/INST])EXP");
}

TEST(ChatTemplateTools, Llama31StyleMatchesJinja2) {
  const ChatTemplate t = ChatTemplate::from_text(kLlama31Style, "<s>", "</s>");
  EXPECT_TRUE(t.uses_tools());
  EXPECT_EQ(t.apply_json(kConversation, kTools, true),
            R"EXP(<s><|start_header_id|>system<|end_header_id|>

Today Date: 26 Jul 2024

Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, respond with a JSON for a function call.

{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string"
                },
                "unit": {
                    "type": "string",
                    "enum": [
                        "c",
                        "f"
                    ]
                }
            },
            "required": [
                "city"
            ]
        }
    }
}

Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"22 C, sunny"<|eot_id|><|start_header_id|>assistant<|end_header_id|>

Sunny, 22 C.<|eot_id|><|start_header_id|>user<|end_header_id|>

Thanks<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)EXP");
  EXPECT_EQ(t.apply_json(kOneUser, "", true), R"EXP(<s><|start_header_id|>system<|end_header_id|>

Today Date: 26 Jul 2024

<|eot_id|><|start_header_id|>user<|end_header_id|>

Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)EXP");
}

TEST(ChatTemplateTools, FieldsReachTheTemplateAsGiven) {
  const ChatTemplate t = ChatTemplate::from_text(
      "{% for m in messages %}{{ m.role }}|{{ m.content is none }}|{{ m.name | default('-') }}|{{ m.tool_call_id | default('-') }}"
      "{% for c in m.tool_calls %}|{{ c.id }}:{{ c.function.arguments is mapping }}:{{ c.function.arguments | tojson }}{% endfor %};"
      "{% endfor %}{{ tools is defined }}");
  // Arguments that are not a JSON object stay text; an object given as an object stays one.
  const std::string messages = R"([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}]},
    {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "not json"}},
                                         {"id": "2", "type": "function", "function": {"name": "f", "arguments": {"z": 1, "a": [true, null]}}}]},
    {"role": "tool", "tool_call_id": "2", "name": "f", "content": "r"}])";
  EXPECT_EQ(t.apply_json(messages, "", false),
            "user|False|-|-;"
            "assistant|True|-|-|1:False:\"not json\"|2:True:{\"z\": 1, \"a\": [true, null]};"
            "tool|False|f|2;"
            "False");
  EXPECT_EQ(t.apply_json(R"([{"role": "user", "content": null}])", "[]", false), "user|False|-|-;True");
  EXPECT_FALSE(ChatTemplate::from_text("{{ messages | length }} tool_names").uses_tools());
  EXPECT_TRUE(ChatTemplate::from_text("{% if tools %}x{% endif %}").uses_tools());
  EXPECT_TRUE(ChatTemplate::from_text("<tool_call>").marks_tool_calls());
  EXPECT_FALSE(ChatTemplate::from_text("{{ tools }}").marks_tool_calls());
}

TEST(ChatTemplateTools, SelectattrAndRejectattr) {
  const ChatTemplate t = ChatTemplate::from_text(
      "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}"
      "{% for m in messages | rejectattr('role', '==', 'user') %} {{ m.role }}{% endfor %}"
      "{% for m in messages | selectattr('tool_calls', 'undefined') %} {{ loop.index }}{% endfor %}"
      "{% for m in messages | selectattr('tool_calls') %} calls{% endfor %}"
      "{% for m in messages | rejectattr('name', 'defined') | rejectattr('role', 'ne', 'user') %} u{% endfor %}"
      "{{ missing | selectattr('x') | list | length }}");
  EXPECT_EQ(t.apply_json(R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f"}}]},
                             {"role": "tool", "name": "f", "content": "r"}, {"role": "user", "content": "b"}])", "", false),
            "2 assistant tool 1 2 3 calls u u0");
  for (const char* bad : {"{{ messages | selectattr('role', 'divisibleby', 3) | list }}", "{{ messages | selectattr('role', 'equalto') | list }}",
                          "{{ messages | selectattr | list }}"})
    EXPECT_NE(error_of([&] { ChatTemplate::from_text(bad).apply_json(kOneUser, "", false); }).find("selectattr"), std::string::npos) << bad;
}

TEST(ChatTemplateTools, BadInputNamesItsPlace) {
  const ChatTemplate t = ChatTemplate::from_text("{% for m in messages %}{{ m.content }}{% endfor %}{{ tools | length }}");
  const std::string image = R"([{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]}])";
  EXPECT_EQ(error_of([&] { t.apply_json(image, "", true); }),
            "'messages'[0].content[1]: an image part (\"image_url\"), but this model has no vision input (it reads text only)");
  EXPECT_NE(error_of([&] { t.apply_json(R"([{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}])", "", true); })
                .find("'messages'[0].content[0]: an image part (\"input_image\")"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { t.apply_json(R"([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}])", "", true); }),
            "'messages'[0].content[0]: content parts of type \"input_audio\" are not supported (only \"text\" parts)");
  EXPECT_EQ(error_of([&] { t.apply_json(R"([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"id": "a"}]}])", "", true); }),
            "'messages'[1].tool_calls[0] must be {\"id\": ..., \"type\": \"function\", \"function\": {\"name\": ..., \"arguments\": ...}}");
  EXPECT_EQ(error_of([&] { t.apply_json(kOneUser, R"([{"type": "retrieval"}])", true); }),
            "'tools'[0] must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": ...}}");
  EXPECT_EQ(error_of([&] { t.apply_json(kOneUser, R"({"type": "function"})", true); }),
            "'tools' must be a list of {\"type\": \"function\", \"function\": {...}}");
  EXPECT_EQ(error_of([&] { t.apply_json("[]", "", true); }), "'messages' must be a non-empty list of {role, content}");
  EXPECT_EQ(error_of([&] { t.apply_json(R"([{"content": "x"}])", "", true); }), "'messages'[0] needs a text 'role'");
  EXPECT_EQ(error_of([&] { t.apply_json(R"([{"role": "user", "content": 3}])", "", true); }),
            "'messages'[0]: 'content' must be a text or a list of text parts");
  EXPECT_NE(error_of([&] { t.apply_json("[{", "", true); }).find("'messages': not valid JSON"), std::string::npos);
}

TEST(ChatTemplateTools, ParseToolCalls) {
  using bl::text::parse_tool_calls;
  // Qwen2.5's form: the blocks on their own lines, nothing else.
  auto r = parse_tool_calls("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "get_weather");
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"city\":\"Paris\",\"unit\":\"c\"}");  // key order kept
  EXPECT_FALSE(r.has_content);
  EXPECT_EQ(r.content, "");
  // Two calls with text around them; the last one without its closing tag; arguments as text.
  r = parse_tool_calls("Let me check.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n"
                       "<tool_call>{\"name\": \"b\", \"arguments\": \"{\\\"x\\\": 1}\"}");
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].name, "a");
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
  EXPECT_EQ(r.tool_calls[1].name, "b");
  EXPECT_EQ(r.tool_calls[1].arguments, "{\"x\": 1}");
  EXPECT_TRUE(r.has_content);
  EXPECT_EQ(r.content, "Let me check.");
  // No arguments: an empty object.
  r = parse_tool_calls("<tool_call>{\"name\": \"now\"}</tool_call>");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
  // Not parsable (broken JSON, no name, arguments of another kind, one bad block of two): plain text.
  for (const std::string text : {"<tool_call>{\"name\": \"a\", \"arguments\": {</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>",
                                 "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>",
                                 "<tool_call>{\"name\": \"a\"}</tool_call><tool_call>oops</tool_call>", "no calls here", ""}) {
    r = parse_tool_calls(text);
    EXPECT_TRUE(r.tool_calls.empty()) << text;
    EXPECT_TRUE(r.has_content) << text;
    EXPECT_EQ(r.content, text);
  }
}

}  // namespace
