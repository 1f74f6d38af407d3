// bitlearn.models: causal language models and tokenizers (bitlearn/models.h, bitlearn/tokenizer.h).
#include <nanobind/nanobind.h>

#include "convert.h"

namespace bl::py {

void bind_models(nb::module_& m) { (void)m; }

}  // namespace bl::py
