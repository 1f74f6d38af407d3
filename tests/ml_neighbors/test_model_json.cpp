// test_model_json.cpp: parse_model_json gives the same JSON value as nlohmann::json::parse (long
// hex values, long keys, escapes, the \u0000 escape, nested arrays) and the same error for bad
// text; a k-NN model file read through it predicts the same bits as the fitted model.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "bitlearn/ml/estimator.h"
#include "ml/model_json.h"
#include "ml_linear/ml_test_util.h"

namespace bl {
namespace {

std::string hex_of_length(size_t n, char salt) {
  static const char digits[] = "0123456789abcdef";
  std::string s(n, '0');
  for (size_t i = 0; i < n; ++i) s[i] = digits[(i * 7 + static_cast<size_t>(salt)) % 16];
  return s;
}

TEST(ModelJson, SameValueAsTheLibraryParse) {
  const std::string big = hex_of_length(5000, 1), big2 = hex_of_length(4096, 2), edge = hex_of_length(4095, 3);
  const std::vector<std::string> texts = {
      "{\"a\": \"" + big + "\", \"b\": [1, 2.5, \"" + big2 + "\", {\"c\": \"" + edge + "\"}], \"d\": null}",
      "{\"" + big + "\": \"" + big2 + "\", \"k\" : \"" + big + "\"}",                  // a long key
      "{\"e\": \"" + big + "\\n" + big2 + "\", \"f\": \"tab\\tq\\\"\", \"g\": \"" + big2 + "\"}",  // escapes
      "{\"h\": \"\\u0000" + big + "\", \"i\": \"" + big2 + "\"}",                       // the NUL escape
      "[\"" + big + "\", \"" + big + "\", [[\"" + big2 + "\"]], true, -0.0, 1e300]",
      "\"" + big + "\"",
      "{\"unicode\": \"caf\\u00e9 \xc3\xa9\", \"j\": \"" + big + "\xc3\xa9\"}",      // non-ASCII stays in the lexer
  };
  for (const std::string& t : texts) {
    const nlohmann::json want = nlohmann::json::parse(t);
    const nlohmann::json got = ml::parse_model_json(t);
    EXPECT_EQ(got, want) << t.substr(0, 80);
    EXPECT_EQ(got.dump(), want.dump());
  }
}

std::string parse_error(const std::string& text, bool fast) {
  try {
    const nlohmann::json j = fast ? ml::parse_model_json(text) : nlohmann::json::parse(text);
    (void)j;
  } catch (const nlohmann::json::parse_error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelJson, SameErrorForBadText) {
  const std::string big = hex_of_length(6000, 4);
  const std::vector<std::string> texts = {
      "{\"a\": \"" + big + "\", \"b\": }",
      "{\"a\": \"" + big + "\"",
      "{\"a\": \"" + big,
      "{\"a\": \"" + big + "\" \"b\": 1}",
      "{\"a\": \"" + big + "\x01\"}",  // a control character inside the long string
      "",
  };
  for (const std::string& t : texts) {
    const std::string want = parse_error(t, false);
    ASSERT_FALSE(want.empty()) << t.substr(0, 40);
    EXPECT_EQ(parse_error(t, true), want) << t.substr(0, 40);
  }
}

// Sabotage arm: a placeholder that is not put back must be noticed by the comparison above.
TEST(ModelJson, ComparisonSeesAChangedLongString) {
  const std::string big = hex_of_length(5000, 5);
  const nlohmann::json a = ml::parse_model_json("{\"a\": \"" + big + "\"}");
  std::string changed = big;
  changed[4321] = changed[4321] == 'f' ? 'e' : 'f';
  EXPECT_NE(a, nlohmann::json::parse("{\"a\": \"" + changed + "\"}"));
}

TEST(ModelJson, KNeighborsModelRoundTripPredictsTheSameBits) {
  Tensor X = ml_test::normal_data(3000, 7, 77);
  std::vector<float> yv(3000);
  const std::vector<float> xv = X.to_vector<float>();
  for (size_t i = 0; i < yv.size(); ++i) yv[i] = xv[i * 7] + xv[i * 7 + 3] > 0.0f ? 1.0f : 0.0f;
  Tensor y = Tensor::from_vector(yv, {3000});
  auto clf = ml::make_estimator("kneighbors_classifier", {{"n_neighbors", "5"}, {"weights", "distance"}});
  clf->fit(X, y);
  const std::string text = clf->to_json_text();
  auto again = ml::estimator_from_json_text(text, "round trip");
  EXPECT_EQ(again->to_json_text(), text);
  Tensor Q = ml_test::normal_data(50, 7, 78);
  const std::vector<float> a = clf->predict_proba(Q).to_vector<float>();
  const std::vector<float> b = again->predict_proba(Q).to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace bl
