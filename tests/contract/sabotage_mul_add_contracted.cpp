// Sabotage arm, compiled with -ffp-contract=fast (and -mfma on x86): this is what a lost flag does.
namespace bl {
float sabotage_mul_add_contracted(float a, float b, float c) { return a * b + c; }
}  // namespace bl
