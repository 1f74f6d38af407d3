// scan_cases.h: generated cases of the selective scan (kernels/selective_scan.h), shared by the CPU
// conformance test and the CUDA one.
#pragma once

#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/selective_scan.h"

namespace bl::conformance {

// One generated case: inputs, the initial state, the reference's y and final state.
struct ScanCase {
  ScanShape shape;
  bool with_d = true;
  std::vector<float> x, dt, A, Bm, Cm, D, state0, y_ref, state_ref;
  std::vector<int64_t> lengths;
  std::string label;

  ScanArgs args(float* state, float* y) const {
    ScanArgs a;
    a.shape = shape;
    a.x = x.data(), a.dt = dt.data(), a.A = A.data(), a.Bm = Bm.data(), a.Cm = Cm.data();
    a.D = with_d ? D.data() : nullptr;
    a.lengths = lengths.data();
    a.state = state;
    a.y = y;
    return a;
  }
};

// The case for shape s: inputs deterministic in seed, a special value every special_every inputs
// (0 = none); lengths cycle through T, 0, T - 1, 1, ... ; A negative, dt mostly positive.
inline ScanCase make_scan_case(ScanShape s, uint64_t seed, int special_every, bool with_d) {
  ScanCase c;
  c.shape = s;
  c.with_d = with_d;
  const int64_t B = s.batch, T = s.steps, H = s.heads, P = s.head_dim, N = s.state, G = s.groups;
  c.x = generate_floats(B * T * H * P, seed, 2.0f, special_every);
  c.dt = generate_floats(B * T * H, seed + 1, 0.5f, special_every);
  for (float& v : c.dt) v = is_nan(v) ? v : abs(v);
  c.A = generate_floats(H * N, seed + 2, 3.0f);
  for (float& v : c.A) v = neg(abs(v));
  c.Bm = generate_floats(B * T * G * N, seed + 3, 1.0f, special_every);
  c.Cm = generate_floats(B * T * G * N, seed + 4, 1.0f, special_every);
  c.D = generate_floats(H, seed + 5, 1.0f);
  c.state0 = generate_floats(B * H * P * N, seed + 6, 0.5f);
  const int64_t pattern[] = {T, 0, T - 1, 1, T / 2};
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = pattern[b % 5];
    c.lengths.push_back(len < 0 ? 0 : (len > T ? T : len));
  }
  c.y_ref.assign(static_cast<size_t>(B * T * H * P), 7.0f);
  c.state_ref = c.state0;
  selective_scan_reference(c.args(c.state_ref.data(), c.y_ref.data()));
  c.label = "scan (B " + std::to_string(B) + ", T " + std::to_string(T) + ", H " + std::to_string(H) + ", P " +
            std::to_string(P) + ", N " + std::to_string(N) + ", G " + std::to_string(G) + ")" +
            (with_d ? "" : " no D") + (special_every ? " specials" : "");
  return c;
}

// Shapes covering empty sizes, one of everything, Mamba (P = 1, A per state) and Mamba-2 (heads,
// groups) layouts, primes and a long sequence.
inline std::vector<ScanShape> scan_shapes() {
  return {{0, 3, 2, 2, 4, 1},   {2, 0, 3, 2, 4, 1},   {1, 1, 1, 1, 1, 1},    {2, 5, 3, 1, 8, 1},
          {3, 7, 8, 16, 16, 1}, {2, 13, 6, 4, 5, 3},  {1, 97, 2, 3, 31, 2},  {5, 33, 128, 1, 16, 1},
          {1, 1, 4, 2, 257, 2}, {2, 300, 2, 2, 8, 1}, {6, 11, 12, 5, 7, 4}};
}

}  // namespace bl::conformance
