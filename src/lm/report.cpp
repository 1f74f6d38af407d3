// report.cpp: the JSON report and the loss-curve picture of a language-model training run.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bitlearn/lm.h"
#include "io/json_array.h"
#include "lm/report.h"

namespace bl::lm {

std::string float_bits_hex(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", u);
  return buf;
}

void put_float(nlohmann::ordered_json& e, const std::string& key, float v) {
  e[key] = v;
  e[key + "_bits"] = float_bits_hex(v);
}

std::string report_json(const TrainResult& r, const TrainOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = "bitlearn.lm.train.v1";
  j["model"] = o.init_from.empty() ? o.model : "init-from:" + o.init_from;
  j["device"] = o.device;
  j["parameters"] = r.parameters;
  j["first_step"] = r.first_step;
  j["last_step"] = r.last_step;
  j["steps"] = json_object_array(r.steps, [](const StepRecord& s, nlohmann::ordered_json& e) {
    e["step"] = s.step;
    put_float(e, "loss", s.loss);
    put_float(e, "grad_norm", s.grad_norm);
    put_float(e, "lr", s.lr);
    if (s.val_loss >= 0) put_float(e, "val_loss", s.val_loss);
    if (!s.params_sha256.empty()) e["params_sha256"] = s.params_sha256;
    e["seconds"] = s.seconds;
    e["tokens"] = s.tokens;
  });
  j["final_params_sha256"] = r.final_params_sha256;
  j["checkpoint_sha256"] = r.checkpoint_sha256;
  return j.dump(1) + "\n";
}

std::string loss_curve_svg(const std::vector<StepRecord>& steps) {
  const double W = 640, H = 400, L = 60, R = 20, Tm = 30, B = 50;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << " " << H << "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double lo = INFINITY, hi = -INFINITY;
  int64_t s0 = 0, s1 = 1;
  for (const StepRecord& r : steps) {
    for (double v : {static_cast<double>(r.loss), static_cast<double>(r.val_loss)}) {
      if (v < 0 || !std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!steps.empty()) {
    s0 = steps.front().step;
    s1 = std::max(steps.back().step, s0 + 1);
  }
  if (!(hi > lo)) {
    lo = std::isfinite(lo) ? lo - 1 : 0;
    hi = lo + 2;
  }
  auto X = [&](double step) { return L + (step - static_cast<double>(s0)) / static_cast<double>(s1 - s0) * (W - L - R); };
  auto Y = [&](double v) { return Tm + (hi - v) / (hi - lo) * (H - Tm - B); };
  s << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n<line x1=\"" << L << "\" y1=\"" << Tm << "\" x2=\"" << L << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n";
  char buf[64];
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (hi - lo) * k / 4.0;
    std::snprintf(buf, sizeof buf, "%.3f", v);
    s << "<text x=\"" << L - 6 << "\" y=\"" << Y(v) + 4 << "\" font-size=\"11\" text-anchor=\"end\">" << buf
      << "</text>\n";
  }
  s << "<text x=\"" << L << "\" y=\"" << H - B + 18 << "\" font-size=\"11\">" << s0 << "</text>\n"
    << "<text x=\"" << W - R << "\" y=\"" << H - B + 18 << "\" font-size=\"11\" text-anchor=\"end\">" << s1
    << "</text>\n<text x=\"" << (W + L) / 2 << "\" y=\"" << H - 12
    << "\" font-size=\"12\" text-anchor=\"middle\">step</text>\n"
    << "<text x=\"" << (W + L) / 2 << "\" y=\"18\" font-size=\"13\" text-anchor=\"middle\">loss (train: blue, "
       "validation: orange)</text>\n";
  auto poly = [&](bool val, const char* color) {
    std::ostringstream pts;
    int n = 0;
    for (const StepRecord& r : steps) {
      const double v = val ? r.val_loss : r.loss;
      if (v < 0 || !std::isfinite(v)) continue;
      pts << X(static_cast<double>(r.step)) << "," << Y(v) << " ";
      ++n;
    }
    if (n > 0)
      s << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"" << pts.str()
        << "\"/>\n";
  };
  poly(false, "#1f77b4");
  poly(true, "#ff7f0e");
  s << "</svg>\n";
  return s.str();
}

}  // namespace bl::lm
