// The accuracy run: blocks of inputs handed to worker threads; per-thread tallies merged in a
// fixed way (maximum error, ties to the lowest input index), so the report does not depend on the
// thread count.
#include "check.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "oracle.h"

namespace mathcheck {

namespace {

constexpr uint64_t kBlock = 1u << 16;

struct Tally {
  double max_err = -1;
  uint64_t worst_index = 0;
  float worst_x = 0, worst_y = 0;
  uint32_t worst_ours = 0, worst_expected = 0;
  uint64_t not_cr = 0, not_faithful = 0, wrong_zero_sign = 0, nan_mismatch = 0, noncanonical = 0,
           mpfr = 0;

  // Records one evaluated case; returns its error in ulps.
  double add(uint64_t index, float x, float y, float ours, const Exact& e) {
    const uint32_t ob = bl::bits_of(ours), eb = bl::bits_of(e.rounded);
    const bool on = std::isnan(ours), en = std::isnan(e.rounded);
    if (e.used_mpfr) ++mpfr;
    if (on && ob != bl::kCanonicalNanBits) ++noncanonical;
    double err = error_ulps(ours, e);
    if (on != en) {
      ++nan_mismatch;
      ++not_faithful;
      ++not_cr;
    } else if (!on && ob != eb) {
      ++not_cr;
      if ((ob & 0x7FFFFFFFu) == 0 && (eb & 0x7FFFFFFFu) == 0) ++wrong_zero_sign;
      else if (err >= 1.0) ++not_faithful;
    }
    if (!on && !en && (err > max_err || (err == max_err && index < worst_index))) {
      max_err = err;
      worst_index = index;
      worst_x = x;
      worst_y = y;
      worst_ours = ob;
      worst_expected = eb;
    }
    return err;
  }

  void merge(const Tally& o) {
    if (o.max_err > max_err || (o.max_err == max_err && o.worst_index < worst_index)) {
      max_err = o.max_err;
      worst_index = o.worst_index;
      worst_x = o.worst_x;
      worst_y = o.worst_y;
      worst_ours = o.worst_ours;
      worst_expected = o.worst_expected;
    }
    not_cr += o.not_cr;
    not_faithful += o.not_faithful;
    wrong_zero_sign += o.wrong_zero_sign;
    nan_mismatch += o.nan_mismatch;
    noncanonical += o.noncanonical;
    mpfr += o.mpfr;
  }
};

// Input number i of the bulk run.
void bulk_input(bl::MathFn fn, const CheckOptions& opts, uint64_t i, float* x, float* y) {
  if (fn == bl::MathFn::pow) {
    pow_pair(i, opts.pow_seed, x, y);
    return;
  }
  *x = bl::float_of(opts.exhaustive ? static_cast<uint32_t>(i) : spread_bits(i));
  *y = 0.0f;
}

}  // namespace

FnReport check_function(bl::MathFn fn, const CheckOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool binary = bl::math_arity(fn) == 2;
  const uint64_t total = (opts.exhaustive && !binary) ? (1ull << 32) : opts.sample;
  const uint64_t n_blocks = (total + kBlock - 1) / kBlock;
  const int threads = opts.threads < 1 ? 1 : opts.threads;

  std::atomic<uint64_t> next{0};
  std::vector<Tally> tallies(threads);
  auto worker = [&](int t) {
    std::vector<float> xs(kBlock), ys(kBlock), out(kBlock);
    Tally& tally = tallies[t];
    for (;;) {
      const uint64_t b = next.fetch_add(1);
      if (b >= n_blocks) break;
      const uint64_t begin = b * kBlock;
      const uint64_t len = total - begin < kBlock ? total - begin : kBlock;
      for (uint64_t k = 0; k < len; ++k) bulk_input(fn, opts, begin + k, &xs[k], &ys[k]);
      bl::math_map_reference(fn, xs.data(), binary ? ys.data() : nullptr, out.data(),
                             static_cast<int64_t>(len));
      if (opts.sabotage) {
        for (uint64_t k = 0; k < len; ++k) {
          const uint32_t b = bl::bits_of(out[k]);
          if (std::isnan(out[k])) out[k] = bl::float_of(0xFFC00000u);
          else if ((begin + k) % 4096 == 0 && (b & 0x7F800000u) != 0x7F800000u && (b & 0x7FFFFFFFu) > 2)
            out[k] = bl::float_of(b + 2u);
        }
      }
      for (uint64_t k = 0; k < len; ++k) {
        // Unary NaN inputs: the exact result is NaN; skip the oracle.
        Exact e;
        if (!binary && std::isnan(xs[k])) {
          e.value = std::numeric_limits<double>::quiet_NaN();
          e.rounded = std::numeric_limits<float>::quiet_NaN();
        } else {
          e = exact_value(fn, xs[k], ys[k], opts.force_mpfr);
        }
        tally.add(begin + k, xs[k], ys[k], out[k], e);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();

  Tally all;
  for (const Tally& t : tallies) all.merge(t);

  // Special values (always evaluated with the same oracle), indexed after the bulk inputs.
  FnReport rep;
  rep.fn = fn;
  std::vector<Special> specials = binary ? pow_specials() : unary_specials(fn);
  uint64_t index = total;
  for (const Special& s : specials) {
    const float ours = bl::canonicalize(bl::math_apply(fn, s.x, s.y));
    Exact e = exact_value(fn, s.x, s.y, opts.force_mpfr);
    SpecialResult r;
    r.input = s;
    r.ours = bl::bits_of(ours);
    r.expected = std::isnan(e.rounded) ? bl::kCanonicalNanBits : bl::bits_of(e.rounded);
    r.err_ulps = all.add(index++, s.x, s.y, ours, e);
    r.ok = r.ours == r.expected;
    rep.specials.push_back(r);
  }

  rep.inputs = total + specials.size();
  rep.max_err_ulps = all.max_err < 0 ? 0 : all.max_err;
  rep.worst_x = all.worst_x;
  rep.worst_y = all.worst_y;
  rep.worst_ours = all.worst_ours;
  rep.worst_expected = all.worst_expected;
  rep.not_correctly_rounded = all.not_cr;
  rep.not_faithful = all.not_faithful;
  rep.wrong_zero_sign = all.wrong_zero_sign;
  rep.nan_mismatch = all.nan_mismatch;
  rep.noncanonical_nan = all.noncanonical;
  rep.mpfr_evaluations = all.mpfr;
  rep.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

uint64_t oracle_self_check(bl::MathFn fn, const CheckOptions& opts) {
  const bool binary = bl::math_arity(fn) == 2;
  std::vector<Special> cases = binary ? pow_specials() : unary_specials(fn);
  for (uint64_t i = 0; i < opts.sample; ++i) {
    Special s{0, 0, "sample"};
    bulk_input(fn, opts, i, &s.x, &s.y);
    cases.push_back(s);
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bad{0};
  auto worker = [&]() {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= cases.size()) break;
      const Exact fast = exact_value(fn, cases[i].x, cases[i].y, false);
      const Exact slow = exact_value(fn, cases[i].x, cases[i].y, true);
      const bool same = bl::bits_of(fast.rounded) == bl::bits_of(slow.rounded) ||
                        (std::isnan(fast.rounded) && std::isnan(slow.rounded));
      if (!same && bad.fetch_add(1) < 10)
        std::printf("  oracle disagreement %s x=0x%08X y=0x%08X: float64 path 0x%08X, MPFR 0x%08X\n",
                    bl::math_fn_name(fn), bl::bits_of(cases[i].x), bl::bits_of(cases[i].y),
                    bl::bits_of(fast.rounded), bl::bits_of(slow.rounded));
    }
  };
  std::vector<std::thread> ts;
  for (int t = 1; t < opts.threads; ++t) ts.emplace_back(worker);
  worker();
  for (auto& t : ts) t.join();
  return bad.load();
}

}  // namespace mathcheck
