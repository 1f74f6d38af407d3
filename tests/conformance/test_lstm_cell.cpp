// Conformance of the fused LSTM cell step (kernels/lstm_cell.h): lstm_cell_forward_cpu and
// lstm_cell_backward_cpu equal the references bit for bit over shapes with N or H = 0, 1, odd,
// primes and large, strided operands, special values (NaN of both signs, +-inf, +-0, subnormals,
// huge) at 1, 2 and 3 threads and every CPU variant this machine runs (scalar, AVX2), with and
// without the next step's gradients, the dx copy and dc_prev.
// The references equal the Tensor op chain they replace (slices, bl::sigmoid / tanh / add / mul /
// sub / square, the adds with +0). Sabotage arms: a reassociated pre-activation sum and a dropped
// +0 add must be caught.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/lstm_cell.h"

namespace bl::conformance {
namespace {

struct CellShape {
  int64_t n, h;
};

const std::vector<CellShape> kShapes = {{0, 5}, {3, 0}, {1, 1}, {2, 3},   {7, 13},  {1, 97},
                                        {64, 64}, {5, 31}, {33, 100}, {3, 257}, {128, 256}};

// Values with many signed zeros and a special value every 7th element.
std::vector<float> cell_data(int64_t n, uint64_t seed, float scale) {
  std::vector<float> v = generate_floats(n, seed, scale, 7);
  test_rng::SplitMix64 rng(seed ^ 0xC311);
  for (auto& x : v)
    if (rng.next() % 9 == 0) x = (rng.next() & 1) ? 0.0f : -0.0f;
  return v;
}

// Forward operands with padded strides (xproj_t rows of T steps, sequence rows of T steps).
struct ForwardCase {
  CellShape s;
  int64_t x_stride, seq_stride;
  std::vector<float> x, hw, bias, c_prev;
  std::vector<float> acts, c, tc, h, seq;  // outputs (pre-filled with a sentinel)

  ForwardCase(CellShape sh, uint64_t seed) : s(sh) {
    x_stride = 4 * s.h * 3 + 5;
    seq_stride = s.h * 3 + 2;
    x = cell_data(s.n * x_stride, seed, 4.0f);
    hw = cell_data(s.n * 4 * s.h, seed + 1, 4.0f);
    bias = cell_data(4 * s.h, seed + 2, 1.0f);
    c_prev = cell_data(s.n * s.h, seed + 3, 3.0f);
    acts.assign(static_cast<size_t>(s.n * 4 * s.h), 7.0f);
    c.assign(static_cast<size_t>(s.n * s.h), 7.0f);
    tc = c;
    h = c;
    seq.assign(static_cast<size_t>(s.n * seq_stride), 7.0f);
  }
  LstmCellForward args() {
    LstmCellForward a;
    a.n = s.n;
    a.h = s.h;
    a.x = x.data();
    a.x_stride = x_stride;
    a.hw = hw.data();
    a.bias = bias.data();
    a.c_prev = c_prev.data();
    a.acts = acts.data();
    a.c = c.data();
    a.tc = tc.data();
    a.h_out = h.data();
    a.seq = seq.data();
    a.seq_stride = seq_stride;
    return a;
  }
};

struct BackwardCase {
  CellShape s;
  bool has_next, with_dx, add_zero, with_dc;
  int64_t d_stride, dx_stride;
  std::vector<float> dh_out, dstate_next, dc_next, acts, tc, c_prev;
  std::vector<float> dgates, dx, dc_prev;

  BackwardCase(CellShape sh, uint64_t seed, int variant) : s(sh) {
    has_next = variant & 1;
    with_dx = variant & 2;
    add_zero = variant & 4;
    with_dc = variant != 0;
    d_stride = s.h * 2 + 1;
    dx_stride = 4 * s.h * 2 + 3;
    dh_out = cell_data(s.n * d_stride, seed, 2.0f);
    dstate_next = cell_data(s.n * s.h, seed + 1, 2.0f);
    dc_next = cell_data(s.n * s.h, seed + 2, 2.0f);
    acts = cell_data(s.n * 4 * s.h, seed + 3, 1.0f);
    tc = cell_data(s.n * s.h, seed + 4, 1.0f);
    c_prev = cell_data(s.n * s.h, seed + 5, 3.0f);
    dgates.assign(static_cast<size_t>(s.n * 4 * s.h), 7.0f);
    dx.assign(static_cast<size_t>(s.n * dx_stride), 7.0f);
    dc_prev.assign(static_cast<size_t>(s.n * s.h), 7.0f);
  }
  LstmCellBackward args() {
    LstmCellBackward a;
    a.n = s.n;
    a.h = s.h;
    a.dh_out = dh_out.data();
    a.dh_out_stride = d_stride;
    a.dstate_next = has_next ? dstate_next.data() : nullptr;
    a.dc_next = has_next ? dc_next.data() : nullptr;
    a.acts = acts.data();
    a.tc = tc.data();
    a.c_prev = c_prev.data();
    a.dgates = dgates.data();
    a.dx = with_dx ? dx.data() : nullptr;
    a.dx_stride = dx_stride;
    a.dx_add_zero = add_zero;
    a.dc_prev = with_dc ? dc_prev.data() : nullptr;
    return a;
  }
};

std::string shape_str(CellShape s) { return "N=" + std::to_string(s.n) + " H=" + std::to_string(s.h); }

// The CPU kernel variants this machine can run.
std::vector<Isa> cpu_variants() {
  std::vector<Isa> v;
  for (Isa isa : {Isa::scalar, Isa::avx2}) if (isa_supported(isa)) v.push_back(isa);
  return v;
}

TEST(LstmCellConformance, ForwardCpuEqualsReference) {
  const Isa before = active_isa();
  int cases = 0;
  for (const CellShape& s : kShapes) {
    ForwardCase ref(s, static_cast<uint64_t>(s.n * 131 + s.h));
    lstm_cell_forward_reference(ref.args());
    for (Isa isa : cpu_variants()) for (int threads : kThreadCounts) {
      set_active_isa(isa);
      ThreadPool pool(threads);
      ForwardCase got(s, static_cast<uint64_t>(s.n * 131 + s.h));
      lstm_cell_forward_cpu(got.args(), pool);
      set_active_isa(before);
      std::string ctx = shape_str(s) + " isa=" + isa_name(isa) + " threads=" + std::to_string(threads);
      ASSERT_TRUE(bits_equal(ref.acts, got.acts, ctx + " acts"));
      ASSERT_TRUE(bits_equal(ref.c, got.c, ctx + " c"));
      ASSERT_TRUE(bits_equal(ref.tc, got.tc, ctx + " tanh(c)"));
      ASSERT_TRUE(bits_equal(ref.h, got.h, ctx + " h"));
      ASSERT_TRUE(bits_equal(ref.seq, got.seq, ctx + " seq"));
      ++cases;
    }
  }
  EXPECT_EQ(cases, static_cast<int>(kShapes.size() * 3 * cpu_variants().size()));
}

TEST(LstmCellConformance, BackwardCpuEqualsReference) {
  const Isa before = active_isa();
  int cases = 0;
  for (const CellShape& s : kShapes) {
    for (int variant = 0; variant < 8; ++variant) {
      const uint64_t seed = static_cast<uint64_t>(s.n * 977 + s.h * 3 + variant);
      BackwardCase ref(s, seed, variant);
      lstm_cell_backward_reference(ref.args());
      for (Isa isa : cpu_variants()) for (int threads : kThreadCounts) {
        set_active_isa(isa);
        ThreadPool pool(threads);
        BackwardCase got(s, seed, variant);
        lstm_cell_backward_cpu(got.args(), pool);
        set_active_isa(before);
        std::string ctx = shape_str(s) + " variant=" + std::to_string(variant) + " isa=" + isa_name(isa) +
                          " threads=" + std::to_string(threads);
        ASSERT_TRUE(bits_equal(ref.dgates, got.dgates, ctx + " dgates"));
        ASSERT_TRUE(bits_equal(ref.dx, got.dx, ctx + " dx"));
        ASSERT_TRUE(bits_equal(ref.dc_prev, got.dc_prev, ctx + " dc_prev"));
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(kShapes.size() * 8 * 3 * cpu_variants().size()));
}

// The Tensor op chain of one forward step (what src/nn/recurrent.cpp ran before the fused kernel),
// on the contiguous [N, 4H] xproj_t rows. reassociate = the sabotage arm: (x + hw) + b.
struct ChainForward {
  Tensor acts, c, tc, h;
};
ChainForward chain_forward(const Tensor& xt, const Tensor& hw, const Tensor& b, const Tensor& c_prev, int64_t h,
                           bool reassociate) {
  Tensor gates = reassociate ? bl::add(bl::add(xt, hw), b) : bl::add(xt, bl::add(hw, b));
  Tensor i = bl::sigmoid(gates.slice(1, 0, h));
  Tensor f = bl::sigmoid(gates.slice(1, h, 2 * h));
  Tensor g = bl::tanh(gates.slice(1, 2 * h, 3 * h));
  Tensor o = bl::sigmoid(gates.slice(1, 3 * h, 4 * h));
  ChainForward r;
  r.c = bl::add(bl::mul(f, c_prev), bl::mul(i, g));
  r.tc = bl::tanh(r.c);
  r.h = bl::mul(o, r.tc);
  r.acts = bl::concat({i, f, g, o}, 1);
  return r;
}

// Strided rows [N, width] of a padded buffer as a contiguous tensor.
Tensor rows_of(const std::vector<float>& v, int64_t n, int64_t width, int64_t stride) {
  std::vector<float> out;
  for (int64_t b = 0; b < n; ++b)
    out.insert(out.end(), v.begin() + b * stride, v.begin() + b * stride + width);
  return Tensor::from_vector(out, {n, width});
}

TEST(LstmCellConformance, ForwardReferenceEqualsTheOpChain) {
  for (const CellShape& s : kShapes) {
    if (s.n * s.h == 0) continue;
    ForwardCase ref(s, static_cast<uint64_t>(s.n * 17 + s.h));
    lstm_cell_forward_reference(ref.args());
    Tensor xt = rows_of(ref.x, s.n, 4 * s.h, ref.x_stride);
    Tensor hw = Tensor::from_vector(ref.hw, {s.n, 4 * s.h});
    Tensor b = Tensor::from_vector(ref.bias, {4 * s.h});
    Tensor cp = Tensor::from_vector(ref.c_prev, {s.n, s.h});
    ChainForward chain = chain_forward(xt, hw, b, cp, s.h, false);
    const std::string ctx = shape_str(s);
    ASSERT_TRUE(bits_equal(chain.acts.to_vector<float>(), ref.acts, ctx + " acts"));
    ASSERT_TRUE(bits_equal(chain.c.to_vector<float>(), ref.c, ctx + " c"));
    ASSERT_TRUE(bits_equal(chain.tc.to_vector<float>(), ref.tc, ctx + " tanh(c)"));
    ASSERT_TRUE(bits_equal(chain.h.to_vector<float>(), ref.h, ctx + " h"));
    ASSERT_TRUE(bits_equal(chain.h.to_vector<float>(), rows_of(ref.seq, s.n, s.h, ref.seq_stride).to_vector<float>(),
                           ctx + " seq"));
  }
}

// The backward op chain (has_next: the tape's adds of the next step's contributions and +0).
struct ChainBackward {
  Tensor dgates, dc_prev;
};
ChainBackward chain_backward(const Tensor& d_out, const Tensor& dstate_next, const Tensor& dc_next,
                             const Tensor& acts, const Tensor& tc, const Tensor& c_prev, int64_t h) {
  const Tensor one = Tensor::scalar(1.0, DType::f32);
  const Tensor zero = Tensor::scalar(0.0, DType::f32);
  Tensor i = acts.slice(1, 0, h), f = acts.slice(1, h, 2 * h), g = acts.slice(1, 2 * h, 3 * h),
         o = acts.slice(1, 3 * h, 4 * h);
  const bool has_next = dc_next.defined();
  Tensor dstate = has_next ? bl::add(dstate_next, d_out) : d_out;
  Tensor dh = has_next ? bl::add(zero, dstate) : dstate;
  Tensor dc_in = has_next ? bl::add(dc_next, zero) : zero;
  Tensor dc = bl::add(dc_in, bl::mul(bl::mul(dh, o), bl::sub(one, bl::square(tc))));
  Tensor d_o = bl::mul(bl::mul(dh, tc), bl::mul(o, bl::sub(one, o)));
  Tensor d_i = bl::mul(bl::mul(dc, g), bl::mul(i, bl::sub(one, i)));
  Tensor d_g = bl::mul(bl::mul(dc, i), bl::sub(one, bl::square(g)));
  Tensor d_f = bl::mul(bl::mul(dc, c_prev), bl::mul(f, bl::sub(one, f)));
  return ChainBackward{bl::concat({d_i, d_f, d_g, d_o}, 1), bl::mul(dc, f)};
}

TEST(LstmCellConformance, BackwardReferenceEqualsTheOpChain) {
  for (const CellShape& s : kShapes) {
    if (s.n * s.h == 0) continue;
    for (int variant : {6, 7}) {  // with dx (+0 copy) and dc_prev; last step and inner step
      BackwardCase ref(s, static_cast<uint64_t>(s.n * 29 + s.h + variant), variant);
      lstm_cell_backward_reference(ref.args());
      Tensor d_out = rows_of(ref.dh_out, s.n, s.h, ref.d_stride);
      Tensor dsn, dcn;
      if (ref.has_next) {
        dsn = Tensor::from_vector(ref.dstate_next, {s.n, s.h});
        dcn = Tensor::from_vector(ref.dc_next, {s.n, s.h});
      }
      ChainBackward chain = chain_backward(d_out, dsn, dcn, Tensor::from_vector(ref.acts, {s.n, 4 * s.h}),
                                           Tensor::from_vector(ref.tc, {s.n, s.h}),
                                           Tensor::from_vector(ref.c_prev, {s.n, s.h}), s.h);
      const std::string ctx = shape_str(s) + " variant=" + std::to_string(variant);
      ASSERT_TRUE(bits_equal(chain.dgates.to_vector<float>(), ref.dgates, ctx + " dgates"));
      ASSERT_TRUE(bits_equal(chain.dc_prev.to_vector<float>(), ref.dc_prev, ctx + " dc_prev"));
      Tensor dx_chain = bl::add(chain.dgates, Tensor::scalar(0.0, DType::f32));
      ASSERT_TRUE(bits_equal(dx_chain.to_vector<float>(), rows_of(ref.dx, s.n, 4 * s.h, ref.dx_stride).to_vector<float>(),
                             ctx + " dx"));
    }
  }
}

TEST(LstmCellConformance, SabotageReassociatedPreActivationIsCaught) {
  ForwardCase ref({64, 64}, 5);
  lstm_cell_forward_reference(ref.args());
  Tensor xt = rows_of(ref.x, 64, 256, ref.x_stride);
  ChainForward bad = chain_forward(xt, Tensor::from_vector(ref.hw, {64, 256}), Tensor::from_vector(ref.bias, {256}),
                                   Tensor::from_vector(ref.c_prev, {64, 64}), 64, true);
  EXPECT_FALSE(bits_equal(bad.acts.to_vector<float>(), ref.acts, "sabotage"));
}

TEST(LstmCellConformance, SabotageDroppedZeroAddIsCaught) {
  BackwardCase with_zero({64, 64}, 11, 7);
  BackwardCase without({64, 64}, 11, 3);  // same data, the dx copy without the +0 add
  lstm_cell_backward_reference(with_zero.args());
  lstm_cell_backward_reference(without.args());
  EXPECT_TRUE(bits_equal(with_zero.dgates, without.dgates, "dgates"));
  EXPECT_FALSE(bits_equal(with_zero.dx, without.dx, "sabotage"));
}

TEST(LstmCellConformance, BadOperandsGiveClearErrors) {
  ThreadPool pool(1);
  BackwardCase bad({2, 3}, 1, 7);
  LstmCellBackward a = bad.args();
  a.dc_next = nullptr;  // dstate_next set without dc_next
  EXPECT_THROW(lstm_cell_backward_cpu(a, pool), Error);
  ForwardCase fc({2, 3}, 1);
  LstmCellForward f = fc.args();
  f.x_stride = 5;  // shorter than a 4H row
  EXPECT_THROW(lstm_cell_forward_cpu(f, pool), Error);
  f = fc.args();
  f.n = -1;
  EXPECT_THROW(lstm_cell_forward_cpu(f, pool), Error);
  f = fc.args();
  f.c_prev = nullptr;
  EXPECT_THROW(lstm_cell_forward_cpu(f, pool), Error);
}

}  // namespace
}  // namespace bl::conformance
