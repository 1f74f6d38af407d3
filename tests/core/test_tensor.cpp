// test_tensor.cpp: the Tensor class: factories, properties, typed access, views, copies, errors.
#include <gtest/gtest.h>

#include <cstring>

#include "bitlearn/ops.h"
#include "core/error.h"

namespace bl {
namespace {

TEST(Tensor, DTypeAndDevice) {
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
  EXPECT_STREQ(dtype_name(DType::boolean), "bool");
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  EXPECT_THROW(Device::parse("gpu"), Error);
  EXPECT_THROW(Device::parse("cuda:"), Error);
  EXPECT_THROW(Device::parse("cuda:x1"), Error);
}

TEST(Tensor, FactoriesAndAccess) {
  Tensor z = Tensor::zeros({2, 3});
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.ndim(), 2);
  EXPECT_EQ(z.dim(-1), 3);
  EXPECT_THROW(z.dim(2), Error);
  EXPECT_TRUE(z.is_contiguous());
  for (float v : z.to_vector<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(z.data<float>()) % 64, 0u);
  EXPECT_THROW(z.data<int32_t>(), Error);  // wrong element type

  Tensor f = Tensor::full({4}, 2.5);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
  Tensor fi = Tensor::full({2}, -3.7, DType::i32);
  EXPECT_EQ(fi.to_vector<int32_t>(), (std::vector<int32_t>{-3, -3}));
  Tensor fu = Tensor::full({1}, 300.0, DType::u8);
  EXPECT_EQ(fu.to_vector<uint8_t>()[0], 255);
  Tensor a = Tensor::arange(5);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  Tensor af = Tensor::arange(3, DType::f32);
  EXPECT_EQ(af.to_vector<float>(), (std::vector<float>{0.0f, 1.0f, 2.0f}));
  EXPECT_THROW(Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}), Error);
  EXPECT_THROW(Tensor::from_vector(std::vector<uint8_t>{0, 2}, {2}, DType::boolean), Error);
  Tensor s = Tensor::scalar(7.0, DType::i64);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item(), 7.0);
  Tensor e = Tensor::empty({0, 5});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  EXPECT_THROW(Tensor::empty({-1}), Error);
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_THROW(u.contiguous(), Error);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor tt = t.transpose(0, 1);
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor p = t.reshape({3, 2}).permute({1, 0});
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  Tensor sl = t.slice(1, 0, 3, 2);
  EXPECT_EQ(sl.to_vector<float>(), (std::vector<float>{0, 2, 3, 5}));
  Tensor neg = t.slice(1, -2, 100);
  EXPECT_EQ(neg.to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
  Tensor un = t.unsqueeze(0);
  EXPECT_EQ(un.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(un.squeeze(0).shape(), (Shape{2, 3}));
  EXPECT_EQ(t.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_THROW(t.squeeze(0), Error);
  Tensor ex = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}).expand({2, 3});
  EXPECT_EQ(ex.strides(), (Shape{0, 1}));
  EXPECT_EQ(ex.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(t.expand({4, 3}), Error);
  // A view writes through to its base.
  Tensor v = t.view({6});
  v.data<float>()[5] = 50.0f;
  EXPECT_EQ(t.to_vector<float>()[5], 50.0f);
  EXPECT_THROW(tt.view({6}), Error);  // not viewable without a copy
  Tensor r = tt.reshape({6});          // reshape copies instead
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 50}));
  EXPECT_EQ(t.reshape({-1, 2}).shape(), (Shape{3, 2}));
  EXPECT_THROW(t.reshape({4, -1}), Error);
  EXPECT_THROW(t.permute({0, 0}), Error);
  EXPECT_THROW(t.transpose(0, 2), Error);
  EXPECT_THROW(t.slice(0, 0, 1, 0), Error);
}

TEST(Tensor, ViewOfSlicedTensor) {
  // A slice of rows is still viewable when its rows stay contiguous.
  Tensor t = Tensor::arange(24, DType::f32).reshape({4, 6});
  Tensor rows = t.slice(0, 1, 3);
  EXPECT_EQ(rows.view({12}).to_vector<float>()[0], 6.0f);
  Tensor cols = t.slice(1, 0, 4);  // rows not contiguous with each other
  EXPECT_THROW(cols.view({16}), Error);
  Tensor split = cols.view({4, 2, 2});
  EXPECT_EQ(split.to_vector<float>(), cols.to_vector<float>());
}

TEST(Tensor, CopiesAndClone) {
  Tensor t = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Tensor c = t.clone();
  c.data<int32_t>()[0] = 9;
  EXPECT_EQ(t.to_vector<int32_t>()[0], 1);
  Tensor tc = t.transpose(0, 1).contiguous();
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(tc.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 4}));
  Tensor same = t.to(Device::cpu());
  EXPECT_EQ(same.raw_data(), t.raw_data());
  Tensor f = t.to(DType::f32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Tensor, CudaUnavailableIsANamedError) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  try {
    Tensor::zeros({2}, DType::f32, Device::cuda(0));
    FAIL() << "expected bl::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("CUDA"), std::string::npos) << m;
  }
  Tensor t = Tensor::zeros({2});
  EXPECT_THROW(t.to(Device::cuda(0)), Error);
}

TEST(Tensor, Digest) {
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  std::string d = t.digest();
  EXPECT_EQ(d.size(), 64u);
  EXPECT_EQ(t.transpose(0, 1).contiguous().transpose(0, 1).digest(), d);  // same values, same digest
  EXPECT_NE(t.reshape({4}).digest(), d);                                 // shape is part of it
}

}  // namespace
}  // namespace bl
