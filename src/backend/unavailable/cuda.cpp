#include "backend/detail/unavailable.hpp"
TUNEKIT_UNAVAILABLE_BACKEND(cuda, "-DTUNEKIT_ENABLE_CUDA=ON")
