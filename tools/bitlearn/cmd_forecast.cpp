// `bitlearn forecast --model M.json --steps H [--exog FILE.csv] [--alpha 0.05] [--out FILE]`
// `bitlearn tsa --data F.csv --column y --test adfuller|kpss|acf|pacf [--nlags N] [--regression R]
//  [--out FILE]`
//
// forecast: the H steps after the series a forecaster (ml/timeseries/forecaster.h, e.g.
// exponential_smoothing) was fitted on, as CSV rows "step,mean,lower,upper" (step 1 .. H; the
// bounds of the 1 - alpha prediction interval, "nan" where the model has none), binary64 values
// written with 17 significant digits (they read back to the same bits). --exog: the future
// regressors, one row per step, with the model's feature columns (only for models fitted with
// some). To standard output unless --out names a file.
// tsa: a statistic of one column (ml/timeseries/stattests.h): adfuller and kpss give "name,value"
// rows (statistic, pvalue, lags, nobs for adfuller, the critical values); acf and pacf give
// "lag,value" rows. --nlags: acf / pacf's lag count, adfuller's maxlag, kpss's lag count (default:
// statsmodels' rules, kpss "auto"); --regression: c (default), ct, ctt or n for adfuller, c or ct for
// kpss. Exit codes: 0 done; 2 bad input.
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "command.h"
#include "core/error.h"
#include "ml/timeseries/forecaster.h"
#include "ml/timeseries/stattests.h"
#include "model_file.h"

namespace {

std::string num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

void emit(const std::string& out, const std::string& text, const char* what) {
  if (out.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    bl::write_file_atomic(out, text, what);
  }
}

struct ForecastArgs {
  std::string model, exog, out;
  int64_t steps = 0;
  double alpha = 0.05;
};

void run_forecast(const ForecastArgs& a) {
  bl::cli::ModelFile model = bl::cli::read_model_file(a.model);
  const auto* fc = dynamic_cast<const bl::ml::Forecaster*>(model.estimator.get());
  BL_CHECK(fc != nullptr, a.model, ": estimator ", model.estimator->name(),
           " is not a forecaster (forecast needs a time-series model, e.g. exponential_smoothing)");
  bl::Tensor exog;
  if (!a.exog.empty()) {
    bl::CsvTable table = bl::read_table(a.exog);
    exog = bl::cli::model_inputs(model, table, a.exog).X;
    BL_CHECK(exog.dim(0) == a.steps, a.exog, ": ", exog.dim(0), " rows of future regressors for --steps ", a.steps,
             " (one row per step)");
  } else if (!model.features.empty()) {
    throw bl::Error(a.model + ": the model was fitted with regressors (" + std::to_string(model.features.size()) +
                    " feature columns); forecast needs --exog FILE.csv with their future values");
  }
  const bl::ml::Forecast f = fc->forecast(a.steps, exog, a.alpha);
  std::string text = "step,mean,lower,upper\n";
  for (size_t i = 0; i < f.mean.size(); ++i)
    text += std::to_string(i + 1) + "," + num17(f.mean[i]) + "," + num17(f.lower[i]) + "," + num17(f.upper[i]) + "\n";
  emit(a.out, text, "forecast CSV");
}

struct TsaArgs {
  std::string data, column, test, regression = "c", out;
  int64_t nlags = -1;
};

void run_tsa(const TsaArgs& a) {
  bl::CsvTable table = bl::read_table(a.data);
  size_t col = table.columns.size();
  for (size_t j = 0; j < table.columns.size(); ++j)
    if (table.columns[j] == a.column) col = j;
  BL_CHECK(col < table.columns.size(), a.data, ": no column '", a.column, "'");
  BL_CHECK(table.text.count(col) == 0, a.data, ": column '", a.column, "' holds text, not numbers");
  const size_t d = table.columns.size();
  std::vector<double> x(static_cast<size_t>(table.rows));
  for (int64_t i = 0; i < table.rows; ++i) x[i] = static_cast<double>(table.values[i * d + col]);
  std::string text;
  if (a.test == "acf" || a.test == "pacf") {
    const std::vector<double> v = a.test == "acf" ? bl::ml::ts::acf(x, a.nlags) : bl::ml::ts::pacf(x, a.nlags);
    text = "lag,value\n";
    for (size_t k = 0; k < v.size(); ++k) text += std::to_string(k) + "," + num17(v[k]) + "\n";
  } else if (a.test == "adfuller") {
    const auto r = bl::ml::ts::adfuller(x, a.nlags, a.regression, "aic");
    text = "name,value\nstatistic," + num17(r.statistic) + "\npvalue," + num17(r.pvalue) + "\nlags," +
           std::to_string(r.used_lag) + "\nnobs," + std::to_string(r.nobs) + "\ncritical_1%," + num17(r.crit[0]) +
           "\ncritical_5%," + num17(r.crit[1]) + "\ncritical_10%," + num17(r.crit[2]) + "\nicbest," +
           num17(r.icbest) + "\n";
  } else if (a.test == "kpss") {
    const auto r = bl::ml::ts::kpss(x, a.regression, a.nlags);
    text = "name,value\nstatistic," + num17(r.statistic) + "\npvalue," + num17(r.pvalue) + "\nlags," +
           std::to_string(r.lags) + "\ncritical_10%," + num17(r.crit[0]) + "\ncritical_5%," + num17(r.crit[1]) +
           "\ncritical_2.5%," + num17(r.crit[2]) + "\ncritical_1%," + num17(r.crit[3]) + "\n";
  } else {
    throw bl::Error("--test " + a.test + ": expected adfuller, kpss, acf or pacf");
  }
  emit(a.out, text, "tsa CSV");
}

// One option of a command: its names, the variable it sets, its help text, whether it must be given.
struct Option {
  const char* names;
  std::variant<std::string*, int64_t*, double*> into;
  const char* help;
  bool required = false;
};

// Adds the subcommand `name` with these options, in this order, then --out (the CSV file to write,
// standard output by default), running run() when chosen.
void add_csv_command(CLI::App& root, const char* name, const char* about, std::initializer_list<Option> options,
                     std::string* out, std::function<void()> run) {
  CLI::App* cmd = root.add_subcommand(name, about);
  for (const Option& o : options) {
    CLI::Option* added = std::visit([&](auto* into) { return cmd->add_option(o.names, *into, o.help); }, o.into);
    if (o.required) added->required();
  }
  cmd->add_option("--out,--output", *out, "CSV file to write (default: standard output)");
  cmd->callback(std::move(run));
}

void setup_forecast(CLI::App& root) {
  auto a = std::make_shared<ForecastArgs>();
  add_csv_command(root, "forecast", "Forecast the steps after the series a time-series model was fitted on",
                  {{"--model", &a->model,
                    "model file of a forecaster (e.g. `bitlearn fit --model exponential_smoothing`)", true},
                   {"--steps", &a->steps, "how many steps to forecast (>= 1)", true},
                   {"--exog", &a->exog,
                    "CSV of the future regressors, one row per step (models fitted with regressors)"},
                   {"--alpha", &a->alpha, "prediction intervals at level 1 - alpha (default 0.05)"}},
                  &a->out, [a] { run_forecast(*a); });
}
BL_REGISTER_COMMAND(setup_forecast);

void setup_tsa(CLI::App& root) {
  auto a = std::make_shared<TsaArgs>();
  add_csv_command(root, "tsa", "Time-series statistics of one column: adfuller, kpss, acf or pacf",
                  {{"--data", &a->data, "CSV file", true},
                   {"--column", &a->column, "the series' column", true},
                   {"--test", &a->test, "adfuller, kpss, acf or pacf", true},
                   {"--nlags", &a->nlags, "lags (acf / pacf), maxlag (adfuller), lags (kpss); default: automatic"},
                   {"--regression", &a->regression,
                    "deterministic terms: c (default), ct, ctt, n (adfuller); c, ct (kpss)"}},
                  &a->out, [a] { run_tsa(*a); });
}
BL_REGISTER_COMMAND(setup_tsa);

}  // namespace
