// The fit of `ppsim calibrate` (batch/calibrate.h): the parameter table, predictions by
// simulation, what the data determine, and Levenberg-Marquardt within bounds.
#include "batch/calibrate.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/numbers.h"

namespace ppsim {
namespace {

constexpr double kGiB = double{1 << 30};

constexpr unsigned Bit(MeasuredKind kind) { return 1u << static_cast<unsigned>(kind); }
// Everything measured per unit of time.
constexpr unsigned kSpeed = Bit(MeasuredKind::kIterationTime) | Bit(MeasuredKind::kTokensPerS) |
                            Bit(MeasuredKind::kSamplesPerS) | Bit(MeasuredKind::kMfu);

// A parameter changing the predictions by less than this (in log, per unit of the parameter) is
// one no measurement depends on; one whose Jacobian column is within this fraction of the span
// of earlier ones is collinear with them.
constexpr double kNoEffect = 1e-4;
constexpr double kCollinear = 1e-3;
// Levenberg-Marquardt: iterations, and the relative decrease of the cost that ends it.
constexpr int kMaxIterations = 60;
constexpr double kTolerance = 1e-12;

// The values of every parameter (CalibrationParameters() order), and which a calibration holds.
struct Point {
  std::vector<double> values;
  std::vector<bool> included;
};

std::string SetValue(double value) { return FormatNumber(value); }

// The calibration of `point` on `gpu`.
std::shared_ptr<LoadedCalibration> CalibrationOf(const std::string& gpu, const Point& point) {
  auto loaded = std::make_shared<LoadedCalibration>();
  proto::Calibration& c = loaded->calibration;
  c.set_gpu(gpu);
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  for (size_t p = 0; p < table.size(); ++p) {
    if (!point.included[p]) continue;
    const double v = point.values[p];
    switch (table[p].applied) {
      case ParameterApplied::kSet:
        c.add_set(std::string(table[p].name) + "=" + SetValue(v));
        break;
      case ParameterApplied::kScale: {
        proto::BandwidthScale* scale = c.add_scale();
        scale->set_path(table[p].name);
        scale->set_factor(v);
        break;
      }
      case ParameterApplied::kMemoryReserve:
        c.set_memory_reserve(FormatNumber(std::round(v)));
        break;
    }
  }
  return loaded;
}

double MeasuredOf(const RunResult& r, MeasuredKind kind) {
  switch (kind) {
    case MeasuredKind::kIterationTime:
      return r.metrics.makespan_s;
    case MeasuredKind::kTokensPerS:
      return r.tokens_per_s;
    case MeasuredKind::kSamplesPerS:
      return r.samples_per_s;
    case MeasuredKind::kMfu:
      return r.mfu;
    case MeasuredKind::kPeakMemory: {
      int64_t peak = 0;
      for (const RankMetrics& rank : r.metrics.ranks) peak = std::max(peak, rank.peak_memory_bytes);
      return static_cast<double>(peak);
    }
  }
  return 0;
}

// The prediction of measurement `m` with `calibration`, by simulating its run.
Status Predict(const Measurement& m, std::shared_ptr<const LoadedCalibration> calibration,
               double* value) {
  RunSpec spec = m.spec;
  spec.platform.calibration = std::move(calibration);
  PreparedRun run;
  RETURN_IF_ERROR(PrepareRun(spec, &run));
  RunResult result;
  RETURN_IF_ERROR(ExecuteRun(run, &result, nullptr, SimGridProcess::kChild, false));
  *value = MeasuredOf(result, m.kind);
  if (!(*value > 0) || !std::isfinite(*value)) {
    return Status::InvalidInput(
        m.where + ": " + MeasuredKindName(m.kind) + ": the run predicts none" +
        (m.kind == MeasuredKind::kMfu || m.kind == MeasuredKind::kTokensPerS ? " (it needs --model)"
                                                                             : "") +
        "; measure what the run can predict");
  }
  return Status();
}

// The log residuals log(predicted / measured) of every measurement at `point` (rows whose kind
// `only` excludes are 0, without a simulation).
Status Residuals(const std::vector<Measurement>& ms, const std::string& gpu, const Point& point,
                 unsigned only, Eigen::VectorXd* residuals) {
  const std::shared_ptr<const LoadedCalibration> calibration = CalibrationOf(gpu, point);
  *residuals = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(ms.size()));
  for (size_t i = 0; i < ms.size(); ++i) {
    if ((only & Bit(ms[i].kind)) == 0) continue;
    double predicted = 0;
    RETURN_IF_ERROR(Predict(ms[i], calibration, &predicted));
    (*residuals)(static_cast<Eigen::Index>(i)) = std::log(predicted / ms[i].value);
  }
  return Status();
}

// Forward differences of the residuals by each parameter of `columns` (in the parameter's unit),
// backward at the upper bound.
Status Jacobian(const std::vector<Measurement>& ms, const std::string& gpu, const Point& point,
                const Eigen::VectorXd& r0, const std::vector<size_t>& columns, Eigen::MatrixXd* j) {
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  *j = Eigen::MatrixXd::Zero(r0.size(), static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c) {
    const CalibrationParameter& p = table[columns[c]];
    const double z = point.values[columns[c]] / p.unit;
    double h = 1e-5 * std::max(std::abs(z), 0.1);
    if ((z + h) * p.unit > p.upper) h = -h;
    Point moved = point;
    moved.values[columns[c]] = (z + h) * p.unit;
    moved.included[columns[c]] = true;
    Eigen::VectorXd r;
    RETURN_IF_ERROR(Residuals(ms, gpu, moved, p.affects, &r));
    for (Eigen::Index i = 0; i < r0.size(); ++i) {
      if ((p.affects & Bit(ms[static_cast<size_t>(i)].kind)) != 0) {
        (*j)(i, static_cast<Eigen::Index>(c)) = (r(i) - r0(i)) / h;
      }
    }
  }
  return Status();
}

}  // namespace

const std::vector<CalibrationParameter>& CalibrationParameters() {
  static const std::vector<CalibrationParameter> table = {
      {"gpu.matmul_efficiency", ParameterApplied::kSet, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec& p) { return p.gpu.matmul_efficiency; },
       "the fraction of the dense 16-bit peak a large GEMM reaches"},
      {"gpu.matmul_efficiency_fp8", ParameterApplied::kSet, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec& p) { return p.gpu.matmul_efficiency_fp8; },
       "the fraction of the FP8 peak a large FP8 GEMM reaches"},
      {"gpu.attention_efficiency", ParameterApplied::kSet, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec& p) { return p.gpu.attention_efficiency; },
       "the fraction of the 16-bit peak flash attention reaches"},
      {"gpu.memory_efficiency", ParameterApplied::kSet, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec& p) { return p.gpu.memory_efficiency; },
       "the fraction of the HBM bandwidth element-wise kernels reach"},
      {"intra_node.bandwidth", ParameterApplied::kScale, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec&) { return 1.0; },
       "the fraction of the node's GPU-to-GPU bandwidth transfers reach"},
      {"nic.bandwidth", ParameterApplied::kScale, 0.05, 1, 1, kSpeed,
       [](const PlatformSpec&) { return 1.0; },
       "the fraction of the NIC bandwidth transfers between nodes reach"},
      {"memory_reserve", ParameterApplied::kMemoryReserve, 0, 64 * kGiB, kGiB,
       Bit(MeasuredKind::kPeakMemory),
       [](const PlatformSpec&) { return static_cast<double>(kDefaultMemoryReserveBytes); },
       "bytes per GPU beyond the model's (CUDA context, NCCL buffers), in GiB"},
  };
  return table;
}

namespace {

// "0.83 x gpu.matmul_efficiency's"-style terms of a collinear column, largest first.
std::string Combination(const std::vector<size_t>& kept, const Eigen::VectorXd& c, size_t p,
                        std::string* determined) {
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  std::string effect;
  const double largest = c.cwiseAbs().maxCoeff();
  for (size_t k = 0; k < kept.size(); ++k) {
    const double ck = c(static_cast<Eigen::Index>(k));
    if (std::abs(ck) < 1e-3 * largest) continue;
    char number[32];
    std::snprintf(number, sizeof(number), "%.3g", std::abs(ck));
    const std::string sign = ck < 0 ? " - " : " + ";
    effect +=
        (effect.empty() ? (ck < 0 ? "-" : "") : sign) + number + " x " + table[kept[k]].name + "'s";
    *determined += std::string(determined->empty() ? "" : ", ") + table[kept[k]].name + sign +
                   number + " x " + table[p].name;
  }
  return effect;
}

// Which parameters the Jacobian `j` (every parameter's column) determines, in table order; the
// others get `why`.
void Determine(const std::vector<Measurement>& ms, const Eigen::MatrixXd& j,
               std::vector<ParameterFit>* fits, std::vector<size_t>* kept) {
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  for (size_t p = 0; p < table.size(); ++p) {
    const Eigen::VectorXd column = j.col(static_cast<Eigen::Index>(p));
    ParameterFit& fit = (*fits)[p];
    bool measured = false;
    for (const Measurement& m : ms) measured = measured || (table[p].affects & Bit(m.kind)) != 0;
    if (!measured) {
      fit.why = "no measurement is of a kind it changes";
    } else if (column.norm() < kNoEffect) {
      fit.why = "no measurement depends on it (changing it moves no prediction)";
    } else if (!kept->empty()) {
      Eigen::MatrixXd k(j.rows(), static_cast<Eigen::Index>(kept->size()));
      for (size_t i = 0; i < kept->size(); ++i) {
        k.col(static_cast<Eigen::Index>(i)) = j.col(static_cast<Eigen::Index>((*kept)[i]));
      }
      const Eigen::VectorXd c = k.colPivHouseholderQr().solve(column);
      if ((column - k * c).norm() < kCollinear * column.norm()) {
        std::string determined;
        const std::string effect = Combination(*kept, c, p, &determined);
        fit.why = "collinear: on these measurements it acts as " + effect +
                  "; the data determine only " + determined;
      }
    }
    fit.determined = fit.why.empty();
    if (fit.determined) kept->push_back(p);
  }
}

// One Levenberg-Marquardt step from `point` (residuals r, Jacobian j over `fitted`): the first
// damping that lowers the cost, or false when none does.
bool Step(const std::vector<Measurement>& ms, const std::string& gpu,
          const std::vector<size_t>& fitted, const Eigen::MatrixXd& j, const Eigen::VectorXd& r,
          double* lambda, Point* point, Eigen::VectorXd* r_new, Status* status) {
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  Eigen::MatrixXd a = j.transpose() * j;
  Eigen::VectorXd g = j.transpose() * r;
  // A parameter at a bound that the descent pushes beyond it stays there (projected
  // Levenberg-Marquardt): its row and column leave the system.
  for (size_t c = 0; c < fitted.size(); ++c) {
    const Eigen::Index i = static_cast<Eigen::Index>(c);
    const CalibrationParameter& p = table[fitted[c]];
    const double v = point->values[fitted[c]];
    if ((v >= p.upper && g(i) < 0) || (v <= p.lower && g(i) > 0)) {
      a.row(i).setZero();
      a.col(i).setZero();
      a(i, i) = 1;
      g(i) = 0;
    }
  }
  for (; *lambda < 1e12; *lambda *= 10) {
    Eigen::MatrixXd damped = a;
    for (Eigen::Index i = 0; i < a.rows(); ++i) damped(i, i) += *lambda * std::max(a(i, i), 1e-12);
    const Eigen::VectorXd delta = damped.ldlt().solve(-g);
    Point trial = *point;
    for (size_t c = 0; c < fitted.size(); ++c) {
      const CalibrationParameter& p = table[fitted[c]];
      const double v = trial.values[fitted[c]] + delta(static_cast<Eigen::Index>(c)) * p.unit;
      trial.values[fitted[c]] = std::clamp(v, p.lower, p.upper);
    }
    *status = Residuals(ms, gpu, trial, ~0u, r_new);
    if (!status->ok()) return false;
    if (r_new->squaredNorm() < r.squaredNorm()) {
      *point = trial;
      *lambda = std::max(*lambda / 10, 1e-9);
      return true;
    }
  }
  return false;
}

// Levenberg-Marquardt over `fitted` from `point`.
Status Fit(const std::vector<Measurement>& ms, const std::string& gpu,
           const std::vector<size_t>& fitted, Point* point, int32_t* iterations, bool* converged) {
  Eigen::VectorXd r;
  RETURN_IF_ERROR(Residuals(ms, gpu, *point, ~0u, &r));
  double lambda = 1e-3;
  for (*iterations = 0; *iterations < kMaxIterations && !fitted.empty(); ++*iterations) {
    Eigen::MatrixXd j;
    RETURN_IF_ERROR(Jacobian(ms, gpu, *point, r, fitted, &j));
    Eigen::VectorXd r_new;
    Status status;
    if (!Step(ms, gpu, fitted, j, r, &lambda, point, &r_new, &status)) {
      *converged = status.ok();  // no step lowers the cost: a minimum
      return status;
    }
    const double decrease = r.squaredNorm() - r_new.squaredNorm();
    r = r_new;
    if (decrease <= kTolerance * std::max(r.squaredNorm(), 1e-30) || r.squaredNorm() < 1e-24) {
      ++*iterations;
      *converged = true;
      return Status();
    }
  }
  *converged = fitted.empty();
  return Status();
}

// `value` to 6 significant digits: what the calibration file holds.
double Rounded(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return std::strtod(text, nullptr);
}

// The start: every parameter at the preset's value, on the first measurement's cluster.
Status StartPoint(const Measurement& m, Point* point) {
  PlatformSpec platform;
  RETURN_IF_ERROR(LoadCluster(m.spec.platform, *m.spec.where, &platform));
  for (const CalibrationParameter& p : CalibrationParameters()) {
    point->values.push_back(p.start(platform));
    point->included.push_back(true);
  }
  return Status();
}

// The fitted point as written (rounded; only the determined parameters), and its predictions.
Status Finish(const std::vector<Measurement>& ms, const Point& fitted, CalibrationResult* result) {
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  Point written = fitted;
  for (size_t p = 0; p < table.size(); ++p) {
    ParameterFit& fit = result->parameters[p];
    written.included[p] = fit.determined;
    if (!fit.determined) continue;
    const double v = table[p].applied == ParameterApplied::kMemoryReserve
                         ? std::round(fitted.values[p])
                         : Rounded(fitted.values[p]);
    written.values[p] = v;
    fit.value = v;
    fit.at_bound = v <= table[p].lower * (1 + 1e-9) || v >= table[p].upper * (1 - 1e-9);
  }
  result->calibration = *CalibrationOf(result->gpu, written);
  const auto calibration = std::make_shared<LoadedCalibration>(result->calibration);
  for (size_t i = 0; i < ms.size(); ++i) {
    MeasurementFit& row = result->measurements[i];
    RETURN_IF_ERROR(Predict(ms[i], calibration, &row.after));
    row.residual = row.after / ms[i].value - 1;
  }
  return Status();
}

}  // namespace

Status Calibrate(const std::vector<Measurement>& ms, CalibrationResult* result) {
  *result = CalibrationResult();
  result->gpu = ms.at(0).gpu;
  Point point;
  RETURN_IF_ERROR(StartPoint(ms[0], &point));
  const std::vector<CalibrationParameter>& table = CalibrationParameters();
  for (size_t p = 0; p < table.size(); ++p) {
    ParameterFit fit;
    fit.name = table[p].name;
    fit.start = fit.value = point.values[p];
    result->parameters.push_back(fit);
  }
  Eigen::VectorXd r0;
  RETURN_IF_ERROR(Residuals(ms, result->gpu, point, ~0u, &r0));
  for (size_t i = 0; i < ms.size(); ++i) {
    MeasurementFit row;
    row.before = ms[i].value * std::exp(r0(static_cast<Eigen::Index>(i)));
    result->measurements.push_back(row);
  }
  std::vector<size_t> all(table.size());
  for (size_t p = 0; p < all.size(); ++p) all[p] = p;
  Eigen::MatrixXd j;
  RETURN_IF_ERROR(Jacobian(ms, result->gpu, point, r0, all, &j));
  std::vector<size_t> fitted;
  Determine(ms, j, &result->parameters, &fitted);
  if (!fitted.empty()) {
    Eigen::MatrixXd k(j.rows(), static_cast<Eigen::Index>(fitted.size()));
    for (size_t c = 0; c < fitted.size(); ++c) {
      k.col(static_cast<Eigen::Index>(c)) = j.col(static_cast<Eigen::Index>(fitted[c]));
    }
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(k).singularValues();
    result->condition = sv(sv.size() - 1) > 0 ? sv(0) / sv(sv.size() - 1) : INFINITY;
  }
  for (size_t p = 0; p < table.size(); ++p) point.included[p] = result->parameters[p].determined;
  RETURN_IF_ERROR(Fit(ms, result->gpu, fitted, &point, &result->iterations, &result->converged));
  return Finish(ms, point, result);
}

Status ValidateFromEachRow(const std::vector<Measurement>& ms, OneRowValidation* validation) {
  *validation = OneRowValidation();
  const size_t n = ms.size();
  for (size_t i = 0; i < n; ++i) {
    CalibrationResult one;
    RETURN_IF_ERROR(Calibrate({ms[i]}, &one));
    const auto calibration = std::make_shared<LoadedCalibration>(one.calibration);
    std::vector<double> errors(n, 0);
    double sum = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k == i) continue;
      double predicted = 0;
      RETURN_IF_ERROR(Predict(ms[k], calibration, &predicted));
      errors[k] = std::abs(predicted / ms[k].value - 1);
      sum += errors[k];
    }
    validation->errors.push_back(errors);
    validation->mape.push_back(n > 1 ? sum / static_cast<double>(n - 1) : 0);
    validation->mean_mape += validation->mape.back() / static_cast<double>(n);
  }
  return Status();
}

}  // namespace ppsim
