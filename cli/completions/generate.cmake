# Writes kern's completion scripts from the built binary (`kern completion SHELL`), so they name
# exactly the verbs and flags that binary has. -DKERN=path/to/kern -DOUT=dir, and -DEMULATOR=
# the command that runs a binary of the target (a cross build), empty otherwise.
foreach(pair "bash;kern" "zsh;_kern" "fish;kern.fish")
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND ${EMULATOR} ${KERN} completion ${shell} OUTPUT_FILE ${OUT}/${name}.new RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${KERN} completion ${shell} failed: ${rc}")
  endif()
  file(RENAME ${OUT}/${name}.new ${OUT}/${name})
endforeach()
