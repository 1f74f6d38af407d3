// Hostile binary and JSON files for the IDX, safetensors and XGBoost JSON readers: sizes read from
// the file never size an allocation the file does not justify, and a field of the wrong JSON type
// is a bl::Error naming the file (never a bare nlohmann exception).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ml_linear/ml_test_util.h"
#include "bitlearn/io.h"
#include "bitlearn/nn/data.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "io/xgboost_json.h"
#include "bitlearn/ml/estimator.h"
#include <nlohmann/json.hpp>

namespace bl {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "bl_hostile_readers_" + std::to_string(::getpid()) + "_" + name;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string p = temp_path(name);
  write_file_atomic(p, bytes);
  return p;
}

using ml_test::error_of;

TEST(HostileReaders, IdxDeclaringMoreThanTheLimitIsRefusedBeforeReading) {
  // [65536, 65536, 2]: 8 GiB declared by a 16-byte file.
  const std::string p = write_temp("big.idx", std::string("\0\0\x08\x03\0\x01\0\0\0\x01\0\0\0\0\0\x02", 16));
  const std::string msg = error_of([&] { nn::read_idx(p); });
  EXPECT_NE(msg.find("declares more than 4294967296 data bytes"), std::string::npos) << msg;
  std::remove(p.c_str());
}

TEST(HostileReaders, IdxTruncatedAfterALargeDeclarationIsRefused) {
  // 1 GiB declared ([1024, 1024, 1024]), 3 bytes present: refused as truncated, and the reader's
  // buffer grows only with the bytes it reads.
  const std::string p = write_temp("trunc.idx", std::string("\0\0\x08\x03\0\0\x04\0\0\0\x04\0\0\0\x04\0abc", 19));
  const std::string msg = error_of([&] { nn::read_idx(p); });
  EXPECT_NE(msg.find("holds 3 data bytes but its dimensions need 1073741824 (truncated)"), std::string::npos) << msg;
  std::remove(p.c_str());
}

TEST(HostileReaders, GzipIdxInflatingBeyondItsDeclarationIsRefused) {
  // A gzip file declaring 4 bytes whose data inflates to 64 MiB: read stops one byte past the
  // declaration and reports trailing data.
  const std::string p = temp_path("bomb.idx.gz");
  gzFile gz = gzopen(p.c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  const char header[] = {0, 0, 8, 1, 0, 0, 0, 4};
  gzwrite(gz, header, sizeof(header));
  const std::vector<char> zeros(1 << 20, 0);
  for (int i = 0; i < 64; ++i) gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size()));
  gzclose(gz);
  const std::string msg = error_of([&] { nn::read_idx(p); });
  EXPECT_NE(msg.find("trailing bytes"), std::string::npos) << msg;
  std::remove(p.c_str());
}

std::string safetensors_bytes(const std::string& header) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header;
}

TEST(HostileReaders, SafetensorsShapeWhoseExtentsOverflowIsRefusedEvenWithNoBytes) {
  const std::string p = write_temp(
      "overflow.safetensors",
      safetensors_bytes(
          R"({"t":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})"));
  const std::string msg = error_of([&] { SafetensorsFile::open(p); });
  EXPECT_NE(msg.find("has an extent product beyond int64"), std::string::npos) << msg;
  std::remove(p.c_str());
}

// A one-leaf model with the objective, `learner_model_param` and `tree_info` given as text.
std::string xgboost_text(const std::string& objective, const std::string& model_param, const std::string& tree_info) {
  return R"({"version":[2,0,0],"learner":{"objective":{"name":")" + objective + R"("},"learner_model_param":)" +
         model_param +
         R"(,"gradient_booster":{"name":"gbtree","model":{"trees":[{"left_children":[-1],"right_children":[-1],)"
         R"("split_indices":[0],"split_conditions":[0.5],"default_left":[0]}],"tree_info":)" +
         tree_info + "}}}}";
}

TEST(HostileReaders, XgboostHugeNumClassDoesNotSizeTheBaseMargins) {
  // One tree and num_class 10^9: refused by the tree count before 10^9 base margins are made.
  const std::string msg = error_of([&] {
    ml::import_xgboost_json(
        xgboost_text("multi:softprob", R"({"num_feature":"1","num_class":"1000000000","base_score":"0.5"})", "[0]"),
        "big.json");
  });
  EXPECT_NE(msg.find("1 trees are not a multiple of num_class = 1000000000"), std::string::npos) << msg;
}

TEST(HostileReaders, XgboostFieldOfTheWrongTypeIsABlError) {
  const std::string msg = error_of([&] {
    ml::import_xgboost_json(
        xgboost_text("reg:squarederror", R"({"num_feature":"1","num_class":"0","base_score":"0.5"})", R"(["x"])"),
        "wrong.json");
  });
  EXPECT_NE(msg.find("wrong.json: learner.gradient_booster.model.tree_info[0]: expected an integer, got \"x\""),
            std::string::npos)
      << msg;
}

TEST(HostileReaders, XgboostTreeInfoThatIsNotAnIntegerIsRefused) {
  // 1e300 read as an int would be a cast out of range; it is refused naming the field.
  const std::string msg = error_of([&] {
    ml::import_xgboost_json(
        xgboost_text("reg:squarederror", R"({"num_feature":"1","num_class":"0","base_score":"0.5"})", "[1e300]"),
        "float.json");
  });
  EXPECT_NE(msg.find("tree_info[0]: expected an integer, got 1e+300"), std::string::npos) << msg;
}

TEST(HostileReaders, ModelFileIntegersOutOfTheirTypeAreRefusedNamingTheField) {
  auto est = ml::make_estimator("decision_tree_regressor", {{"max_depth", "2"}});
  est->fit(Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {6, 1}),
           Tensor::from_vector(std::vector<float>{0, 0, 0, 1, 1, 1}, {6}));
  const nlohmann::json good = nlohmann::json::parse(est->to_json_text());
  ASSERT_NO_THROW(ml::estimator_from_json_text(good.dump(), "good.json"));  // the unedited file loads
  struct Edit {
    const char* field;
    nlohmann::json value;
    const char* expect;
  };
  const Edit edits[] = {
      {"feature", 1e300, "state.trees[0].feature[0]: expected an integer, got 1e+300"},
      {"feature", 1.5, "state.trees[0].feature[0]: expected an integer, got 1.5"},
      {"left", 3000000000LL, "state.trees[0].left[0] = 3000000000 is out of range"},
      {"default_left", 300, "state.trees[0].default_left[0] = 300 is out of range"},
      {"default_left", -1, "state.trees[0].default_left[0] = -1 is negative"},
      {"n_values", 1e19, "state.trees[0].n_values: expected an integer"},
  };
  for (const Edit& e : edits) {
    nlohmann::json j = good;
    nlohmann::json& tree = j["state"]["trees"][0];
    if (tree[e.field].is_array()) {
      tree[e.field][0] = e.value;
    } else {
      tree[e.field] = e.value;
    }
    const std::string msg = error_of([&] { ml::estimator_from_json_text(j.dump(), "edited.json"); });
    EXPECT_NE(msg.find(e.expect), std::string::npos) << e.field << ": " << msg;
  }
  // A state integer of an estimator: n_features as a float.
  nlohmann::json j = good;
  j["state"]["n_features"] = 1e300;
  const std::string msg = error_of([&] { ml::estimator_from_json_text(j.dump(), "edited.json"); });
  EXPECT_NE(msg.find("state.n_features: expected an integer, got 1e+300"), std::string::npos) << msg;
}

}  // namespace
}  // namespace bl
