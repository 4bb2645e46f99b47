/* A command task's line as an argument vector, when running it through
 * /bin/sh would do no more than split it into words: then the executor
 * spawns the program itself and saves the shell's exec per task, as
 * `xargs` does (command-task.c).
 *
 * A line qualifies when it is only words separated by blanks, each word
 * made of characters that are never special to sh (letters, digits and
 * _@%+:,./=-) and of single-quoted strings ('...', as sparkctl quotes an
 * input, an embedded quote written '\''), and its first word is neither an
 * assignment (NAME=...) nor one of sh's builtins or reserved words (whose
 * meaning differs from a program's of the same name: echo, cd, exit, ...).
 * Anything else — $, `, ", globs, redirections, ;, &, |, a comment, a
 * newline — goes to the shell as before. */
#pragma once

/* 1 with *ret a NULL-terminated vector (free with command_words_free()),
 * 0 if the line needs the shell, -ENOMEM. */
int command_words(const char *command, char ***ret);
char **command_words_free(char **words);
static inline void command_words_freep(char ***words) {
        command_words_free(*words);
}
