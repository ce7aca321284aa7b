#pragma once
// The keys of a Kernel Tuner T1 file's sections (the T1 schema's, and the
// benchmark hub's where its files add some), checked by load_t1 for every
// command that reads such a file, and read by the spec loader's T1 reader.
#include <string>
#include <vector>

namespace tunekit::spec_detail {

inline const std::vector<std::string> kT1Sections{"$schema", "General", "ConfigurationSpace", "KernelSpecification",
                                                  "Search",  "Budget",  "BenchmarkConfig"};
inline const std::vector<std::string> kT1KernelKeys{
    "Device", "Language", "CompilerOptions", "Profiling", "KernelName", "KernelFile", "GlobalSizeType", "SharedMemory",
    "SimulationInput", "GlobalSize", "LocalSize", "Arguments", "ReferenceArguments",
    // The benchmark hub's; Kernel Tuner reads ProblemSize and GridDivX/Y/Z.
    "BenchmarkName", "ProblemSize", "GridDivX", "GridDivY", "GridDivZ", "Stream", "Misc"};
inline const std::vector<std::string> kT1DeviceKeys{"PlatformId", "DeviceId", "Name"};
inline const std::vector<std::string> kT1ArgumentKeys{"Name", "Type", "Size", "TypeSize", "FillType", "FillValue",
                                                      "DataSource", "RandomSeed", "AccessType", "MemoryType",
                                                      // The benchmark hub's: constant memory, and outputs marked.
                                                      "MemType", "Output"};
inline const std::vector<std::string> kT1SearchKeys{"Name", "Attributes"};
inline const std::vector<std::string> kT1AttributeKeys{"Name", "Value"};
inline const std::vector<std::string> kT1BudgetKeys{"Type", "BudgetValue"};

}  // namespace tunekit::spec_detail
