// gp_kernel_expr.cpp: parsing, printing and evaluating the kernel expressions of
// gaussian_process_regressor, in binary64 on the host in a fixed order.
//
// Grammar: expr := term ('+' term)*; term := factor ('*' factor)*; factor := number ['**' 2] |
// name '(' args ')' | '(' expr ')', left associative. Names (scikit-learn's constructors; arguments
// positional in its order or keyword): ConstantKernel / C(constant_value, constant_value_bounds),
// RBF(length_scale, length_scale_bounds), Matern(length_scale, length_scale_bounds, nu),
// RationalQuadratic(length_scale, alpha, length_scale_bounds, alpha_bounds), DotProduct(sigma_0,
// sigma_0_bounds), WhiteKernel(noise_level, noise_level_bounds). Bounds are "fixed" (quoted or not)
// or (lo, hi) with 0 < lo <= hi; default (1e-5, 1e5). A bare number c is ConstantKernel(c), c**2 is
// ConstantKernel(c * c) (scikit-learn's printed form).
//
// Evaluation from d2 = |a - b|^2 and dot = a . b (binary64, feature order), with D = d2 / l^2:
//   constant c;  rbf exp(-D / 2);  white noise on the diagonal of K(X, X), 0 elsewhere;
//   matern 0.5: exp(-r), r = sqrt(D); 1.5: (1 + t) exp(-t), t = sqrt(3 D); 2.5: (1 + t + t^2 / 3)
//   exp(-t), t = sqrt(5 D); rational_quadratic base^-alpha = exp(-alpha log(base)), base = 1 + d2 /
//   (2 alpha l^2); dot_product sigma_0^2 + dot; sum K1 + K2; product K1 K2.
// Gradients with respect to log(theta) (scikit-learn's): constant c; white noise I; rbf D exp(-D/2);
// matern 0.5: r exp(-r); 1.5: 3 D exp(-t); 2.5: 5/3 D (1 + t) exp(-t); rational_quadratic
// length_scale d2 K / (l^2 base), alpha K (-alpha log(base) + d2 / (2 l^2 base)); dot_product
// 2 sigma_0^2; sum the kids' in order; product G1 K2 then K1 G2.
// Every loop runs over rows then columns; exp / log are exp64 / log64 (gp_kernel_expr.h).
#include "ml/gaussian_process/gp_kernel_expr.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>
#include <cstdlib>
#include <limits>

#include "contract/math.h"
#include "core/error.h"

namespace bl::ml::gp {

namespace {

constexpr const char* kWho = "gaussian_process_regressor: kernel=";

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  KernelExpr parse() {
    KernelExpr e = expr();
    skip();
    if (i_ < t_.size()) fail("'+', '*' or the end");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) {
    const std::string found = i_ < t_.size() ? "'" + t_.substr(i_, 12) + "'" : "the end";
    throw ::bl::Error(::bl::detail::concat(kWho, "'", t_, "': expected ", expected, " at position ", i_, ", found ", found,
            " (kernels: RBF, Matern, RationalQuadratic, DotProduct, WhiteKernel, ConstantKernel or a number, "
            "combined by + and * with parentheses)"));
  }
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n')) ++i_;
  }
  bool eat(const char* s) {
    skip();
    const size_t n = std::char_traits<char>::length(s);
    if (t_.compare(i_, n, s) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  void need(const char* s) {
    if (!eat(s)) fail(std::string("'") + s + "'");
  }
  bool at_number() {
    skip();
    return i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' ||
                              t_[i_] == '-' || t_[i_] == '+');
  }
  double number() {
    skip();
    const char* s = t_.c_str() + i_;
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s) fail("a number");
    i_ += static_cast<size_t>(end - s);
    return v;
  }
  std::string ident() {
    skip();
    size_t j = i_;
    while (j < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[j])) || t_[j] == '_')) ++j;
    if (j == i_) fail("a kernel name, a number or '('");
    std::string s = t_.substr(i_, j - i_);
    i_ = j;
    return s;
  }

  // The node op(left, right): sums and products are read left-associative, one pair at a time.
  static KernelExpr pair_node(KernelExpr::Op op, KernelExpr left, KernelExpr right) {
    KernelExpr node;
    node.op = op;
    node.kids.push_back(std::move(left));
    node.kids.push_back(std::move(right));
    return node;
  }

  KernelExpr expr() {
    KernelExpr e = term();
    while (eat("+")) e = pair_node(KernelExpr::Op::sum, std::move(e), term());
    return e;
  }
  KernelExpr term() {
    KernelExpr e = factor();
    for (;;) {
      skip();
      if (t_.compare(i_, 2, "**") == 0) fail("'*' (a power only follows a number, as c**2)");
      if (!eat("*")) break;
      e = pair_node(KernelExpr::Op::product, std::move(e), factor());
    }
    return e;
  }
  KernelExpr factor() {
    if (eat("(")) {
      KernelExpr e = expr();
      need(")");
      return e;
    }
    if (at_number()) {
      const size_t at = i_;
      double c = number();
      if (eat("**")) {
        const double p = number();
        if (p != 2.0) {
          i_ = at;
          fail("a number or c**2 (only the power 2 is read)");
        }
        c = c * c;
      }
      KernelExpr e;
      e.op = KernelExpr::Op::constant;
      e.hp = {{"constant_value", c}};
      check_value(e.hp[0], at);
      return e;
    }
    const size_t at = i_;
    const std::string name = ident();
    KernelExpr e;
    std::vector<std::string> order;  // positional argument names
    if (name == "ConstantKernel" || name == "C") {
      e.op = KernelExpr::Op::constant;
      e.hp = {{"constant_value"}};
      order = {"constant_value", "constant_value_bounds"};
    } else if (name == "RBF") {
      e.op = KernelExpr::Op::rbf;
      e.hp = {{"length_scale"}};
      order = {"length_scale", "length_scale_bounds"};
    } else if (name == "Matern") {
      e.op = KernelExpr::Op::matern;
      e.hp = {{"length_scale"}};
      order = {"length_scale", "length_scale_bounds", "nu"};
    } else if (name == "RationalQuadratic") {
      e.op = KernelExpr::Op::rational_quadratic;
      e.hp = {{"alpha"}, {"length_scale"}};
      order = {"length_scale", "alpha", "length_scale_bounds", "alpha_bounds"};
    } else if (name == "DotProduct") {
      e.op = KernelExpr::Op::dot_product;
      e.hp = {{"sigma_0"}};
      order = {"sigma_0", "sigma_0_bounds"};
    } else if (name == "WhiteKernel") {
      e.op = KernelExpr::Op::white;
      e.hp = {{"noise_level"}};
      order = {"noise_level", "noise_level_bounds"};
    } else {
      i_ = at;
      fail("RBF, Matern, RationalQuadratic, DotProduct, WhiteKernel, ConstantKernel (C) or a number");
    }
    need("(");
    size_t pos = 0;
    bool keyword_seen = false;
    if (!eat(")")) {
      for (;;) {
        skip();
        const size_t arg_at = i_;
        std::string key;
        size_t j = i_;
        while (j < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[j])) || t_[j] == '_')) ++j;
        size_t k = j;
        while (k < t_.size() && t_[k] == ' ') ++k;
        if (j > i_ && !std::isdigit(static_cast<unsigned char>(t_[i_])) && k < t_.size() && t_[k] == '=') {
          key = t_.substr(i_, j - i_);
          i_ = k + 1;
          keyword_seen = true;
        } else {
          if (keyword_seen) fail("a keyword argument (name=value) after a keyword argument");
          if (pos >= order.size()) fail("')' (" + name + " takes " + std::to_string(order.size()) + " arguments)");
          key = order[pos++];
        }
        bool known = false;
        for (const auto& o : order) known = known || o == key;
        if (!known) {
          i_ = arg_at;
          fail("an argument of " + name + " (" + join(order) + ")");
        }
        argument(e, key, arg_at);
        if (eat(")")) break;
        if (!eat(",")) fail("',' or ')'");
      }
    }
    for (const Hyper& h : e.hp) check_value(h, at);
    return e;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  void check_value(const Hyper& h, size_t at) {
    if (!(std::isfinite(h.value) && h.value > 0.0)) {
      i_ = at;
      fail(h.name + " > 0 and finite (got " + std::to_string(h.value) + ")");
    }
  }

  void argument(KernelExpr& e, const std::string& key, size_t at) {
    if (key == "nu") {
      const double nu = number();
      if (nu != 0.5 && nu != 1.5 && nu != 2.5) {
        i_ = at;
        fail("nu in {0.5, 1.5, 2.5}");
      }
      e.nu = nu;
      return;
    }
    const bool bounds = key.size() > 7 && key.compare(key.size() - 7, 7, "_bounds") == 0;
    const std::string base = bounds ? key.substr(0, key.size() - 7) : key;
    Hyper* h = nullptr;
    for (Hyper& x : e.hp) h = x.name == base ? &x : h;
    if (!bounds) {
      h->value = number();
      return;
    }
    skip();
    if (eat("\"fixed\"") || eat("'fixed'") || eat("fixed")) {
      h->fixed = true;
      return;
    }
    if (!eat("(") && !eat("[")) fail("\"fixed\" or (lo, hi)");
    const double lo = number();
    need(",");
    const double hi = number();
    if (!eat(")") && !eat("]")) fail("')'");
    if (!(lo > 0.0 && lo <= hi && std::isfinite(hi))) {
      i_ = at;
      fail(key + " with 0 < lo <= hi < inf");
    }
    h->lo = lo;
    h->hi = hi;
  }

  const std::string& t_;
  size_t i_ = 0;
};

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string leaf_name(KernelExpr::Op op) {
  switch (op) {
    case KernelExpr::Op::constant: return "ConstantKernel";
    case KernelExpr::Op::rbf: return "RBF";
    case KernelExpr::Op::matern: return "Matern";
    case KernelExpr::Op::rational_quadratic: return "RationalQuadratic";
    case KernelExpr::Op::dot_product: return "DotProduct";
    case KernelExpr::Op::white: return "WhiteKernel";
    default: return "";
  }
}

void collect(KernelExpr& k, std::vector<Hyper*>& out) {
  for (KernelExpr& c : k.kids) collect(c, out);
  for (Hyper& h : k.hp)
    if (!h.fixed) out.push_back(&h);
}

int64_t count_free(const KernelExpr& k) {
  int64_t n = 0;
  for (const KernelExpr& c : k.kids) n += count_free(c);
  for (const Hyper& h : k.hp) n += h.fixed ? 0 : 1;
  return n;
}

}  // namespace

KernelExpr parse_kernel(const std::string& text) {
  if (text == "none" || text == "None")
    return parse_kernel("ConstantKernel(1) * RBF(1)");
  return Parser(text).parse();
}

std::string kernel_text(const KernelExpr& k) {
  if (k.op == KernelExpr::Op::sum || k.op == KernelExpr::Op::product) {
    const bool prod = k.op == KernelExpr::Op::product;
    auto side = [&](const KernelExpr& c, bool right) {
      const bool paren = (prod && c.op == KernelExpr::Op::sum) || (right && c.op == k.op);
      const std::string s = kernel_text(c);
      return paren ? "(" + s + ")" : s;
    };
    return side(k.kids[0], false) + (prod ? " * " : " + ") + side(k.kids[1], true);
  }
  std::string s = leaf_name(k.op) + "(";
  bool first = true;
  auto put = [&](const std::string& a) {
    s += (first ? "" : ", ") + a;
    first = false;
  };
  // Values first in the constructor's order (length_scale before alpha), then non-default bounds.
  std::vector<const Hyper*> hs;
  for (const Hyper& h : k.hp) hs.push_back(&h);
  if (k.op == KernelExpr::Op::rational_quadratic) std::swap(hs[0], hs[1]);
  for (const Hyper* h : hs) put(h->name + "=" + num(h->value));
  if (k.op == KernelExpr::Op::matern) put("nu=" + num(k.nu));
  for (const Hyper* h : hs) {
    if (h->fixed) put(h->name + "_bounds=\"fixed\"");
    else if (h->lo != 1e-5 || h->hi != 1e5) put(h->name + "_bounds=(" + num(h->lo) + ", " + num(h->hi) + ")");
  }
  return s + ")";
}

std::vector<Hyper*> free_hypers(KernelExpr& k) {
  std::vector<Hyper*> out;
  collect(k, out);
  return out;
}

bool uses_dot_product(const KernelExpr& k) {
  if (k.op == KernelExpr::Op::dot_product) return true;
  for (const KernelExpr& c : k.kids)
    if (uses_dot_product(c)) return true;
  return false;
}

PairData pair_data(const float* A, int64_t a, const float* B, int64_t b, int64_t d, bool need_dot, bool same) {
  PairData p;
  p.a = a;
  p.b = b;
  p.same = same;
  p.d2.assign(static_cast<size_t>(a * b), 0.0);
  if (need_dot) p.dot.assign(static_cast<size_t>(a * b), 0.0);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j) {
      double s = 0.0, t = 0.0;
      for (int64_t f = 0; f < d; ++f) {
        const double x = static_cast<double>(A[i * d + f]), y = static_cast<double>(B[j * d + f]);
        const double df = x - y;
        s += df * df;
        t += x * y;
      }
      p.d2[i * b + j] = s;
      if (need_dot) p.dot[i * b + j] = t;
    }
  return p;
}

void evaluate(const KernelExpr& k, const PairData& p, std::vector<double>& K, std::vector<std::vector<double>>* grads) {
  const int64_t a = p.a, b = p.b, nn = a * b;
  K.assign(static_cast<size_t>(nn), 0.0);
  if (k.op == KernelExpr::Op::sum || k.op == KernelExpr::Op::product) {
    std::vector<double> K1, K2;
    std::vector<std::vector<double>> G1, G2;
    evaluate(k.kids[0], p, K1, grads ? &G1 : nullptr);
    evaluate(k.kids[1], p, K2, grads ? &G2 : nullptr);
    const bool prod = k.op == KernelExpr::Op::product;
    for (int64_t i = 0; i < nn; ++i) K[i] = prod ? K1[i] * K2[i] : K1[i] + K2[i];
    if (grads) {
      for (auto& g : G1) {
        if (prod)
          for (int64_t i = 0; i < nn; ++i) g[i] = g[i] * K2[i];
        grads->push_back(std::move(g));
      }
      for (auto& g : G2) {
        if (prod)
          for (int64_t i = 0; i < nn; ++i) g[i] = K1[i] * g[i];
        grads->push_back(std::move(g));
      }
    }
    return;
  }
  const bool want = grads != nullptr;
  std::vector<double> g0, g1;
  const bool free0 = !k.hp[0].fixed;
  const bool free1 = k.hp.size() > 1 && !k.hp[1].fixed;
  if (want && free0) g0.assign(static_cast<size_t>(nn), 0.0);
  if (want && free1) g1.assign(static_cast<size_t>(nn), 0.0);
  switch (k.op) {
    case KernelExpr::Op::constant: {
      const double c = k.hp[0].value;
      for (int64_t i = 0; i < nn; ++i) K[i] = c;
      if (!g0.empty())
        for (int64_t i = 0; i < nn; ++i) g0[i] = c;
      break;
    }
    case KernelExpr::Op::white: {
      const double c = k.hp[0].value;
      if (p.same)
        for (int64_t i = 0; i < a && i < b; ++i) {
          K[i * b + i] = c;
          if (!g0.empty()) g0[i * b + i] = c;
        }
      break;
    }
    case KernelExpr::Op::dot_product: {
      const double s2 = k.hp[0].value * k.hp[0].value;
      for (int64_t i = 0; i < nn; ++i) K[i] = s2 + p.dot[i];
      if (!g0.empty())
        for (int64_t i = 0; i < nn; ++i) g0[i] = 2.0 * s2;
      break;
    }
    case KernelExpr::Op::rbf: {
      const double l2 = k.hp[0].value * k.hp[0].value;
      for (int64_t i = 0; i < nn; ++i) {
        const double D = p.d2[i] / l2;
        K[i] = exp64(-0.5 * D);
        if (!g0.empty()) g0[i] = D * K[i];
      }
      break;
    }
    case KernelExpr::Op::matern: {
      const double l2 = k.hp[0].value * k.hp[0].value;
      for (int64_t i = 0; i < nn; ++i) {
        const double D = p.d2[i] / l2;
        if (k.nu == 0.5) {
          const double r = std::sqrt(D);
          K[i] = exp64(-r);
          if (!g0.empty()) g0[i] = r * K[i];
        } else if (k.nu == 1.5) {
          const double t = std::sqrt(3.0 * D);
          const double e = exp64(-t);
          K[i] = (1.0 + t) * e;
          if (!g0.empty()) g0[i] = 3.0 * D * e;
        } else {
          const double t = std::sqrt(5.0 * D);
          const double e = exp64(-t);
          K[i] = (1.0 + t + 5.0 * D / 3.0) * e;
          if (!g0.empty()) g0[i] = 5.0 / 3.0 * D * (1.0 + t) * e;
        }
      }
      break;
    }
    case KernelExpr::Op::rational_quadratic: {
      const double al = k.hp[0].value, l2 = k.hp[1].value * k.hp[1].value;
      for (int64_t i = 0; i < nn; ++i) {
        const double base = 1.0 + p.d2[i] / (2.0 * al * l2);
        const double lb = log64(base);
        K[i] = exp64(-al * lb);
        if (!g0.empty()) g0[i] = K[i] * (-al * lb + p.d2[i] / (2.0 * l2 * base));
        if (!g1.empty()) g1[i] = p.d2[i] * K[i] / (l2 * base);
      }
      break;
    }
    default:
      break;
  }
  if (want) {
    if (free0) grads->push_back(std::move(g0));
    if (free1) grads->push_back(std::move(g1));
  }
}

std::vector<double> kernel_diag(const KernelExpr& k, const float* X, int64_t m, int64_t d) {
  std::vector<double> out(static_cast<size_t>(m), 0.0);
  if (k.op == KernelExpr::Op::sum || k.op == KernelExpr::Op::product) {
    const std::vector<double> a = kernel_diag(k.kids[0], X, m, d), b = kernel_diag(k.kids[1], X, m, d);
    for (int64_t i = 0; i < m; ++i) out[i] = k.op == KernelExpr::Op::product ? a[i] * b[i] : a[i] + b[i];
    return out;
  }
  for (int64_t i = 0; i < m; ++i) {
    switch (k.op) {
      case KernelExpr::Op::constant:
      case KernelExpr::Op::white: out[i] = k.hp[0].value; break;
      case KernelExpr::Op::dot_product: {
        double t = 0.0;
        for (int64_t f = 0; f < d; ++f) t += static_cast<double>(X[i * d + f]) * static_cast<double>(X[i * d + f]);
        out[i] = k.hp[0].value * k.hp[0].value + t;
        break;
      }
      default: out[i] = 1.0; break;
    }
  }
  return out;
}

}  // namespace bl::ml::gp
