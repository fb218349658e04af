// The entry point of the layering checks (cmake/Layering.cmake): they exist
// to be linked, never to be run.
int main() {
  return 0;
}
