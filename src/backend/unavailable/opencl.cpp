#include "backend/detail/unavailable.hpp"
TUNEKIT_UNAVAILABLE_BACKEND(opencl, "-DTUNEKIT_ENABLE_OPENCL=ON and the CL headers")
