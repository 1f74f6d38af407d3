// chat_template.h: the chat templates of Hugging Face models (tokenizer_config.json's
// "chat_template", or chat_template.jinja), rendered as transformers' apply_chat_template does.
//
// The templates are Jinja. This is the subset the chat templates of the families bitlearn loads
// use, with transformers' environment (trim_blocks and lstrip_blocks on):
//   statements  {% if %}/{% elif %}/{% else %}/{% endif %}, {% for x in xs %} (also `for k, v in
//               d.items()`, and {% else %}), {% set x = ... %}, {% set ns.attr = ... %},
//               whitespace control {%- -%} {{- -}}, comments {# #}
//   expressions literals (strings, integers, floats, true/false/none, lists, dicts), names,
//               attribute and item access, slices [a:b:c], + - * / // % **, ~, comparisons, `in`,
//               `not in`, and/or/not, `x if c else y`, tests (`is defined`, `is none`,
//               `is string`, `is mapping`, `is iterable`, `is number`, `is not ...`)
//   filters     trim, length, count, upper, lower, title, capitalize, replace, tojson, string, join,
//               first, last, default, reverse, list, items, safe, selectattr/rejectattr (with a test
//               name among those above, or equalto / eq / == / ne / != and its argument)
//   calls       raise_exception(msg), namespace(k=v, ...), range(n); string methods strip, lstrip,
//               rstrip, startswith, endswith, split, upper, lower, title, replace; dict items, get,
//               keys, values
//   loop        loop.index, index0, first, last, length, revindex, revindex0, previtem, nextitem,
//               depth, depth0
// Anything else is a bl::Error naming the construct and its place in the template (unknown
// statements, filters and tests when the template is parsed). Strings count, index, slice and change
// case by character, as Python's do. As Jinja reads a template, \r\n and \r become \n and one final
// newline is dropped.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace bl::text {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", ...
  std::string content;
};

struct ChatTemplateNode;

// One tool call of an assistant reply, in OpenAI's wire format: `arguments` is JSON text.
struct ToolCall {
  std::string name;
  std::string arguments;
};

// A generated reply split into its text and its tool calls (parse_tool_calls).
struct ChatReply {
  std::string content;  // the text around the calls, trimmed; the whole text when there are none
  bool has_content = true;  // false when the reply is only tool calls (OpenAI's content: null)
  std::vector<ToolCall> tool_calls;
};

// The tool calls a model of the Hermes / Qwen2.5 convention writes into its reply: each
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> (the last one may lack its closing tag,
// when generation ended right after the JSON). A reply whose blocks do not all hold such an object
// (JSON with a text "name" and object or text "arguments") is plain text: no calls, content the
// whole text.
ChatReply parse_tool_calls(const std::string& generated);

class ChatTemplate {
 public:
  // Parses a template; bos_token and eos_token are the variables of the same names.
  static ChatTemplate from_text(const std::string& source, const std::string& bos_token = "",
                                const std::string& eos_token = "");
  // The template of a model folder: DIR/chat_template.jinja, else the "chat_template" of
  // DIR/tokenizer_config.json (a string, or a list of {name, template}: the one named "default");
  // bos_token and eos_token from tokenizer_config.json (a string or {"content": ...}). A folder
  // without a template is a bl::Error saying so.
  static ChatTemplate from_model_dir(const std::string& dir);

  // The prompt text of the conversation: apply_chat_template(messages, tokenize=False,
  // add_generation_prompt=...). A raise_exception of the template is a bl::Error with its message.
  std::string apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  // The same for a conversation in OpenAI's chat format, as JSON text: messages_json a list of
  // messages whose fields all reach the template (role, content, name, tool_call_id, tool_calls,
  // ...), tools_json "" (the template sees no `tools`) or a list of {"type": "function",
  // "function": {...}} passed as `tools`, as apply_chat_template(messages, tools=...) does. Content
  // is a text, a list of {"type": "text", "text"} parts (joined), or null / missing (None for an
  // assistant message with tool_calls, else ""). A tool call's "arguments" given as JSON text of an
  // object reaches the template as that object (templates write it with tojson). Object keys keep
  // their order. Bad input (an image or other non-text content part, a malformed tool) is a
  // bl::Error naming its place, as 'messages'[i].content[j].
  std::string apply_json(const std::string& messages_json, const std::string& tools_json,
                         bool add_generation_prompt) const;

  // Whether the template refers to `tools` (templates that do not would drop them silently).
  bool uses_tools() const;
  // Whether the template writes tool calls as <tool_call> blocks (Hermes / Qwen2.5), the form
  // parse_tool_calls reads back.
  bool marks_tool_calls() const;

 private:
  std::shared_ptr<const ChatTemplateNode> root_;
  std::shared_ptr<const std::string> source_;  // the template text (errors name its lines)
  std::string bos_, eos_;
};

}  // namespace bl::text
