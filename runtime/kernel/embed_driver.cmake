# Turns one driver source file (runtime/kernel/drivers/) into a C++ file that defines it as a
# string, so the kern binary carries the driver and nothing is installed in the image.
# Run at build time as: cmake -DIN=driver.py -DOUT=driver.cc -DSYMBOL=kPythonDriverSource -P this
# The file goes in a raw string literal; a source that contains the delimiter fails the build.
file(READ ${IN} body)
set(delim "KERN_DRIVER")
string(FIND "${body}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter )${delim}\"")
endif()
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT}
  "// Generated from runtime/kernel/drivers/${name} by runtime/kernel/embed_driver.cmake.\n"
  "#include \"runtime/kernel/drivers.h\"\n\n"
  "namespace kern::kernel {\n\n"
  "extern const char ${SYMBOL}[] = R\"${delim}(${body})${delim}\";\n\n"
  "}  // namespace kern::kernel\n")
