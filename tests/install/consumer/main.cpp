// A user's program against the installed public headers only: a tensor op, an estimator fitted,
// saved as text and loaded back, and a bl::Error caught. Prints lines install_test.sh checks.
#include <bitlearn/error.h>
#include <bitlearn/ml/estimator.h>
#include <bitlearn/ops.h>
#include <bitlearn/tensor.h>
#include <bitlearn/version.h>

#include <cstdio>
#include <vector>

int main() {
  std::printf("version %s %s\n", bl::kVersion, bl::kContractProfile);
  const bl::Tensor a = bl::Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  const bl::Tensor b = bl::Tensor::from_vector(std::vector<float>{1, 0, 0, 1, 1, 1}, {3, 2});
  const std::vector<float> c = bl::matmul(a, b).to_vector<float>();
  std::printf("matmul %g %g %g %g\n", c[0], c[1], c[2], c[3]);

  // y = 2 x0 - x1 + 3, exactly: the fitted ridge (alpha 0) recovers it; the model file round-trips.
  std::vector<float> x, y;
  for (int i = 0; i < 8; ++i) {
    const float x0 = static_cast<float>(i), x1 = static_cast<float>((i * 3) % 5);
    x.push_back(x0);
    x.push_back(x1);
    y.push_back(2 * x0 - x1 + 3);
  }
  auto ridge = bl::ml::make_estimator("ridge", {{"alpha", "0"}});
  ridge->fit(bl::Tensor::from_vector(x, {8, 2}), bl::Tensor::from_vector(y, {8}));
  auto loaded = bl::ml::estimator_from_json_text(ridge->to_json_text(), "consumer model");
  const std::vector<float> p =
      loaded->predict(bl::Tensor::from_vector(std::vector<float>{10, 1}, {1, 2})).to_vector<float>();
  std::printf("ridge predicts %.3f\n", p[0]);

  try {
    bl::matmul(a, a);
    std::printf("no error\n");
    return 1;
  } catch (const bl::Error& e) {
    std::printf("bl::Error caught\n");
  }
  return 0;
}
