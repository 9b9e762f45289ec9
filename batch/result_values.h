// How the report shows a results column's values to people: four significant digits and a unit
// ("95.13 ms", "24.31%", "1.23 M/s", "35.2 GiB"). The CSV keeps every digit; these are for the
// page only (the table's cells, the charts' hover text).
#ifndef PPSIM_BATCH_RESULT_VALUES_H_
#define PPSIM_BATCH_RESULT_VALUES_H_

#include <string>

namespace ppsim {

// `value` of results column `column` (batch/results.h ResultColumn), compact enough for a
// table cell: durations (makespan_s, time_to_train_s, wall_s) as "95.13 ms" or "12.3 days";
// bubbles, mfu and hfu as percentages; rates as "1.235 M/s" (config/units.h HumanCount); bytes as "35.2 GiB" (a capacity of 0
// as "unlimited"); gpu_hours and cost as counts ("1.235 M"). Other columns: "".
std::string ShowValue(int column, double value);

}  // namespace ppsim

#endif  // PPSIM_BATCH_RESULT_VALUES_H_
