// test_lm_bad_input.cpp: bad input to the language-model trainer gets a bl::Error that names the
// problem, and nothing on disk is lost: short, empty and non-UTF-8 corpora, a tokenizer larger than
// the model's vocabulary, checkpoints of another shape or other hyperparameters, a NaN loss, a full
// disk during a checkpoint write, truncated and garbage token files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/tokenizer.h"
#include "core/digest.h"
#include "core/error.h"
#include "lm/lm_test_util.h"

namespace bl::lm {
namespace {

namespace fs = std::filesystem;
using testing::temp_dir;
using testing::tiny_options;

// The message of the bl::Error that fn throws ("" when it throws none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (std::getenv("BL_SHOW_ERRORS")) std::fprintf(stderr, "error: %s\n", e.what());
    return e.what();
  }
  return "";
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Files in dir whose name contains ".tmp." (left behind by an interrupted atomic write).
std::vector<std::string> temp_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

TEST(LmBadInput, CorpusShorterThanOneSequence) {
  const std::string dir = temp_dir("short");
  TrainOptions o = tiny_options(dir, "llama");
  o.data = dir + "/short.txt";
  write_bytes(o.data, "a few words\n");
  const std::string m = error_of([&] { train(o); });
  EXPECT_NE(m.find("fewer than one sequence"), std::string::npos) << m;
  EXPECT_NE(m.find("short.txt"), std::string::npos) << m;
}

TEST(LmBadInput, EmptyFileAndEmptyFolder) {
  const std::string dir = temp_dir("empty");
  TrainOptions o = tiny_options(dir, "llama");
  o.data = dir + "/empty.txt";
  write_bytes(o.data, "");
  std::string m = error_of([&] { train(o); });
  EXPECT_NE(m.find("empty.txt' is empty"), std::string::npos) << m;
  o.data = dir + "/nothing";
  fs::create_directories(o.data);
  m = error_of([&] { train(o); });
  EXPECT_NE(m.find("holds no text files"), std::string::npos) << m;
  EXPECT_NE(m.find("nothing"), std::string::npos) << m;
  o.data = dir + "/absent";
  m = error_of([&] { train(o); });
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
}

TEST(LmBadInput, NonUtf8FileNamesFileAndOffset) {
  const std::string dir = temp_dir("utf8");
  TrainOptions o = tiny_options(dir, "llama");
  fs::create_directories(dir + "/corpus");
  write_bytes(dir + "/corpus/a.txt", "plain text that is fine\n");
  write_bytes(dir + "/corpus/b.txt", "caf\xc3\xa9 then a bad byte \xff here");
  o.data = dir + "/corpus";
  const std::string m = error_of([&] { train(o); });
  EXPECT_NE(m.find("b.txt"), std::string::npos) << m;
  EXPECT_NE(m.find("not UTF-8"), std::string::npos) << m;
  EXPECT_NE(m.find("offset 22"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(o.tokens)) << "no token file is written for a corpus that was refused";
}

TEST(LmBadInput, TokenizerLargerThanTheModelVocabulary) {
  const std::string dir = temp_dir("vocab");
  TrainOptions o = tiny_options(dir, "llama");
  o.config_path = dir + "/small_vocab.json";
  write_file_atomic(o.config_path,
                    R"({"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "hidden_act": "silu"})",
                    "config");
  const std::string m = error_of([&] { train(o); });
  EXPECT_NE(m.find("384 ids"), std::string::npos) << m;
  EXPECT_NE(m.find("vocab_size is 300"), std::string::npos) << m;
}

TEST(LmBadInput, ResumeFromACheckpointOfAnotherShape) {
  const std::string dir = temp_dir("shape");
  TrainOptions o = tiny_options(dir, "llama");
  o.checkpoint = dir + "/run.ckpt";
  o.stop_at = 2;
  train(o);
  const std::string before = file_bytes(o.checkpoint);
  TrainOptions other = o;
  other.config_path = dir + "/wide.json";
  write_file_atomic(other.config_path,
                    R"({"model_type": "llama", "vocab_size": 384, "hidden_size": 96, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "hidden_act": "silu"})",
                    "config");
  other.resume = true;
  other.stop_at = 4;
  const std::string m = error_of([&] { train(other); });
  EXPECT_NE(m.find("model.embed_tokens.weight"), std::string::npos) << m;
  EXPECT_NE(m.find("shape"), std::string::npos) << m;
  EXPECT_TRUE(file_bytes(o.checkpoint) == before) << "the refused resume changed the checkpoint";
}

TEST(LmBadInput, ResumeWithOtherHyperparametersIsRefused) {
  const std::string dir = temp_dir("hparams");
  TrainOptions o = tiny_options(dir, "llama");
  o.checkpoint = dir + "/run.ckpt";
  o.stop_at = 2;
  train(o);
  const std::string before = file_bytes(o.checkpoint);
  o.resume = true;
  o.stop_at = 4;
  {
    TrainOptions r = o;
    r.lr = 1e-3f;
    const std::string m = error_of([&] { train(r); });
    EXPECT_NE(m.find("--resume refused"), std::string::npos) << m;
    EXPECT_NE(m.find("lr"), std::string::npos) << m;
  }
  {
    TrainOptions r = o;
    r.seed = 7;
    const std::string m = error_of([&] { train(r); });
    EXPECT_NE(m.find("seed"), std::string::npos) << m;
  }
  {
    TrainOptions r = o;
    r.batch = 8;
    const std::string m = error_of([&] { train(r); });
    EXPECT_NE(m.find("batch"), std::string::npos) << m;
  }
  EXPECT_TRUE(file_bytes(o.checkpoint) == before);
  // Micro-batching is free to change on resume: it does not change a bit.
  TrainOptions r = o;
  r.accumulate = 2;
  EXPECT_EQ(train(r).last_step, 4);
}

TEST(LmBadInput, NanLossStopsNamingTheStepAndKeepsTheCheckpoint) {
  const std::string dir = temp_dir("nan");
  TrainOptions o = tiny_options(dir, "llama");
  o.lr = 1e30f;
  o.clip = 0;
  o.warmup = 0;
  o.checkpoint = dir + "/run.ckpt";
  o.checkpoint_every = 1;
  std::string last_good;
  int64_t last_step = 0;
  o.on_step = [&](const StepRecord& r) {
    last_good = file_bytes(o.checkpoint);
    last_step = r.step;
  };
  const std::string m = error_of([&] { train(o); });
  ASSERT_FALSE(m.empty()) << "a learning rate of 1e30 trained without a non-finite loss";
  ASSERT_GE(last_step, 1);
  EXPECT_NE(m.find("at step " + std::to_string(last_step + 1)), std::string::npos) << m;
  EXPECT_TRUE(m.find("NaN") != std::string::npos || m.find("infinite") != std::string::npos ||
              m.find("not finite") != std::string::npos)
      << m;
  EXPECT_NE(m.find("intact"), std::string::npos) << m;
  EXPECT_TRUE(file_bytes(o.checkpoint) == last_good) << "the checkpoint of step " << last_step << " changed";
}

// The child side of FullDiskDuringCheckpointKeepsThePrevious, which re-executes this program
// under a file-size limit with BL_LM_FULL_DISK_DIR set: resumes the run there and exits 3 on
// bl::Error, 0 when the run succeeds.
[[noreturn]] void full_disk_child(const std::string& dir) {
  TrainOptions o = tiny_options(dir, "llama");
  o.checkpoint = dir + "/run.ckpt";
  o.resume = true;
  o.stop_at = 4;
  o.threads = 1;
  try {
    train(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::fflush(stderr);
    std::_Exit(3);
  }
  std::_Exit(0);
}

TEST(LmBadInput, FullDiskDuringCheckpointKeepsThePrevious) {
  if (const char* child_dir = std::getenv("BL_LM_FULL_DISK_DIR")) full_disk_child(child_dir);
  const std::string dir = temp_dir("fulldisk");
  TrainOptions o = tiny_options(dir, "llama");
  o.checkpoint = dir + "/run.ckpt";
  o.stop_at = 2;
  train(o);
  const std::string before = file_bytes(o.checkpoint);
  const auto token_size = static_cast<rlim_t>(fs::file_size(o.tokens));
  const rlim_t limit = token_size + 4096;
  ASSERT_LT(limit, before.size()) << "the checkpoint must be larger than the token file for this test";

  int err_pipe[2];
  ASSERT_EQ(::pipe(err_pipe), 0);
  // The child re-executes this program (a fork of a process with worker threads may only call
  // async-signal-safe functions until exec): the limit and the ignored SIGXFSZ survive the exec.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(err_pipe[0]);
    ::dup2(err_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 1);
    struct rlimit rl {};
    rl.rlim_cur = limit;
    rl.rlim_max = limit;
    ::setrlimit(RLIMIT_FSIZE, &rl);
    ::signal(SIGXFSZ, SIG_IGN);
    ::setenv("BL_LM_FULL_DISK_DIR", dir.c_str(), 1);
    char self[] = "/proc/self/exe";
    char filter[] = "--gtest_filter=LmBadInput.FullDiskDuringCheckpointKeepsThePrevious";
    char* argv[] = {self, filter, nullptr};
    ::execv(self, argv);
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  std::string child_err;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(err_pipe[0], buf, sizeof buf)) > 0) child_err.append(buf, static_cast<size_t>(n));
  ::close(err_pipe[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal: " << child_err;
  EXPECT_EQ(WEXITSTATUS(status), 3) << child_err;
  if (std::getenv("BL_SHOW_ERRORS")) std::fprintf(stderr, "child: %s", child_err.c_str());
  EXPECT_NE(child_err.find("run.ckpt"), std::string::npos) << child_err;
  EXPECT_NE(child_err.find("write failed"), std::string::npos) << child_err;
  EXPECT_TRUE(file_bytes(o.checkpoint) == before) << "the previous checkpoint did not survive";
  EXPECT_TRUE(temp_files(dir).empty()) << "a partial checkpoint was left behind";
  // The checkpoint still resumes.
  TrainOptions r = o;
  r.resume = true;
  r.stop_at = 4;
  EXPECT_EQ(train(r).last_step, 4);
}

TEST(LmBadInput, TruncatedAndGarbageTokenFiles) {
  const std::string dir = temp_dir("tokens");
  const text::Tokenizer tok = text::Tokenizer::from_file(testing::tokenizer_path());
  const std::vector<uint8_t> tok_bytes = read_file_bytes(testing::tokenizer_path(), "tokenizer");
  const std::string tok_sha = sha256_hex(tok_bytes.data(), tok_bytes.size());
  const std::string path = dir + "/good.tokens";
  const TokenFile good = prepare_tokens(testing::corpus_dir(), tok, tok_sha, path);
  ASSERT_GT(good.size(), 1000);
  const std::string bytes = file_bytes(path);

  const std::string cut = dir + "/cut.tokens";
  write_bytes(cut, bytes.substr(0, bytes.size() - 3));
  std::string m = error_of([&] { TokenFile::open(cut); });
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  EXPECT_NE(m.find("cut.tokens"), std::string::npos) << m;

  const std::string stub = dir + "/stub.tokens";
  write_bytes(stub, "BLTOK");
  m = error_of([&] { TokenFile::open(stub); });
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;

  const std::string garbage = dir + "/garbage.tokens";
  write_bytes(garbage, std::string(5000, '\x5a'));
  m = error_of([&] { TokenFile::open(garbage); });
  EXPECT_NE(m.find("bad magic"), std::string::npos) << m;

  std::string bad_header = bytes;
  bad_header[12] = '#';  // the JSON header's first byte
  const std::string header = dir + "/header.tokens";
  write_bytes(header, bad_header);
  m = error_of([&] { TokenFile::open(header); });
  EXPECT_NE(m.find("malformed header"), std::string::npos) << m;

  std::string huge_header = bytes;
  huge_header[11] = '\x7f';  // header length far beyond the file
  write_bytes(header, huge_header);
  m = error_of([&] { TokenFile::open(header); });
  EXPECT_NE(m.find("header"), std::string::npos) << m;

  m = error_of([&] { TokenFile::open(dir + "/absent.tokens"); });
  EXPECT_NE(m.find("cannot open"), std::string::npos) << m;

  // A body corrupted behind an intact header: ids beyond the vocabulary are refused, not embedded.
  {
    std::string body = bytes;
    body[body.size() - 2] = '\xff';
    body[body.size() - 1] = '\xff';
    const std::string corrupt = dir + "/corrupt.tokens";
    write_bytes(corrupt, body);
    m = error_of([&] { TokenFile::open(corrupt); });
    EXPECT_NE(m.find("corrupt.tokens"), std::string::npos) << m;
    EXPECT_NE(m.find("65535"), std::string::npos) << m;
    // prepare_tokens rebuilds it.
    prepare_tokens(testing::corpus_dir(), tok, tok_sha, corrupt);
    EXPECT_TRUE(file_bytes(corrupt) == bytes);
  }

  // prepare_tokens rebuilds a garbage or truncated file in place of the right one.
  for (const std::string& p : {garbage, cut}) {
    const TokenFile rebuilt = prepare_tokens(testing::corpus_dir(), tok, tok_sha, p);
    EXPECT_EQ(rebuilt.size(), good.size());
    EXPECT_TRUE(file_bytes(p) == bytes) << p;
  }
}

}  // namespace
}  // namespace bl::lm
