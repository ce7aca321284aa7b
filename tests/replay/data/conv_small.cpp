// Stands in for Kernel Tuner's convolution kernel (benchmark_hub's
// convolution_milo.cu) in conv_small.yaml: replayed tunes look its configs up
// in conv_small.json.gz and never build this file.
extern "C" void convolution(float* output, const float* input, const float* filter) {
  (void)output;
  (void)input;
  (void)filter;
}
