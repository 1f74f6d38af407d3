// lm_training.cpp: `bitlearn verify --lm-training`.
#include "lm_training.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/lm_evidence.h"
#include "core/error.h"

namespace bl::cli {

namespace {

std::vector<std::string> split_routes(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty() || text == "all") return out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    BL_CHECK(!item.empty(), "verify --lm-routes: empty route name in '", text, "'");
    out.push_back(item);
  }
  return out;
}

}  // namespace

int run_lm_training(const LmTrainingOptions& o) {
  bl::lm::EvidenceOptions eo;
  bl::lm::EvidenceResult r;
  try {
    BL_CHECK(o.steps >= 1, "--lm-steps must be >= 1, got ", o.steps);
    eo.routes = split_routes(o.routes);
    const std::vector<std::string> known = bl::lm::evidence_route_names();
    for (const std::string& name : eo.routes)
      BL_CHECK(std::find(known.begin(), known.end(), name) != known.end(), "--lm-routes: unknown route '", name,
               "' (known: cpu-1t, cpu-2t, cuda, cpu-cuda-cpu)");
    eo.steps = o.steps;
    eo.switch_every = o.switch_every;
    if (!o.corpus.empty()) eo.corpus_source = o.corpus;
    eo.progress = ::isatty(2) != 0;
    if (o.dir.empty()) {
      char scratch_template[] = "/tmp/bitlearn_lm_XXXXXX";
      BL_CHECK(::mkdtemp(scratch_template) != nullptr, "verify --lm-training: cannot create a scratch folder");
      eo.scratch_dir = scratch_template;
    } else {
      eo.scratch_dir = o.dir;
    }
    std::printf("language-model training evidence: %s, %lld steps, switch every %lld, scratch %s\n", eo.model.c_str(),
                static_cast<long long>(eo.steps), static_cast<long long>(eo.switch_every), eo.scratch_dir.c_str());
    std::fflush(stdout);
    r = bl::lm::run_lm_evidence(eo);
  } catch (const bl::Error& e) {
    std::fprintf(stderr, "bitlearn verify: %s\n", e.what());
    return 2;
  }
  std::printf("corpus %zu fortune files, sha256 %s; tokenizer %s%s", r.corpus_files.size(),
              r.corpus_sha256.substr(0, 16).c_str(), r.tokenizer_sha256.substr(0, 16).c_str(),
              r.tokenizer_reused ? " (cached)" : "");
  if (r.parameters > 0) std::printf("; %lld parameters", static_cast<long long>(r.parameters));
  std::printf("\n");
  for (const bl::lm::RouteResult& route : r.routes) {
    if (!route.error.empty()) {
      std::printf("%-13s FAILED   (%s)\n", route.name.c_str(), route.error.c_str());
      continue;
    }
    if (!route.ran) {
      std::printf("%-13s SKIPPED  (%s)\n", route.name.c_str(), route.skip_reason.c_str());
      continue;
    }
    std::printf("%-13s steps %lld  loss %.4f -> %.4f  records %s  checkpoint %s  %.1f s\n", route.name.c_str(),
                static_cast<long long>(route.steps.size()), route.steps.front().loss, route.steps.back().loss,
                route.records_sha256.c_str(), route.checkpoint_sha256.c_str(), route.seconds);
    if (route.segments.size() > 1)
      for (const std::string& s : route.segments) std::printf("              %s\n", s.c_str());
    if (!route.note.empty()) std::printf("              (%s)\n", route.note.c_str());
  }
  for (const std::string& d : r.divergences) std::printf("DIVERGENT: %s\n", d.c_str());
  std::printf("reports: %s/<route>.report.json\n", r.scratch_dir.c_str());
  if (!o.json.empty()) {
    try {
      bl::write_file_atomic(o.json, bl::lm::evidence_json(r), "evidence JSON");
    } catch (const bl::Error& e) {
      std::fprintf(stderr, "bitlearn verify: %s\n", e.what());
      return 2;
    }
    std::printf("wrote %s\n", o.json.c_str());
  }
  bool any_ran = false;
  for (const bl::lm::RouteResult& route : r.routes) any_ran = any_ran || route.ran || !route.error.empty();
  if (!any_ran) {
    std::fprintf(stderr, "bitlearn verify: no route of --lm-routes could run here\n");
    return 2;
  }
  std::printf("%s\n", r.identical ? "IDENTICAL: every route gave the same per-step records and checkpoint"
                                  : "DIVERGENT: the routes disagree");
  std::printf("lm-training digest: %s\n", r.digest.empty() ? "none (no route completed)" : r.digest.c_str());
  return r.identical ? 0 : 1;
}

}  // namespace bl::cli
