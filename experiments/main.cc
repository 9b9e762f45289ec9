#include <iostream>
#include <string>
#include <vector>

#include "experiments/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ppsim::RunCli(args, std::cout, std::cerr);
}
