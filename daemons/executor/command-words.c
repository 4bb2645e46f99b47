/* See command-words.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "command-words.h"
#include "macro.h"

/* dash's builtins and reserved words, and a few bash ones a user may
 * expect from sh: with any of these first, the shell runs the line. */
static const char *const shell_words[] = {
        "!", ".", ":", "[", "[[", "alias", "bg", "break", "case", "cd", "command", "continue", "do", "done",
        "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi", "for",
        "function", "getopts", "hash", "if", "in", "jobs", "kill", "let", "local", "printf", "pwd", "read",
        "readonly", "return", "select", "set", "shift", "source", "test", "then", "times", "trap", "true",
        "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
};

static bool plain_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               strchr("_@%+:,./=-", c) != NULL;
}

char **command_words_free(char **words) {
        if (words)
                for (char **w = words; *w; w++)
                        free(*w);
        free(words);
        return NULL;
}

int command_words(const char *command, char ***ret) {
        _cleanup_(command_words_freep) char **words = NULL;
        size_t n = 0, len;
        const char *p;

        if (!command)
                return 0;
        len = strlen(command);
        /* at most one word per two characters, and the NULL */
        words = calloc(len / 2 + 2, sizeof(char *));
        if (!words)
                return -ENOMEM;
        p = command;
        for (;;) {
                char *w, *o;

                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        break;
                /* a word is never longer than what is left of the line */
                w = o = malloc(strlen(p) + 1);
                if (!w)
                        return -ENOMEM;
                words[n++] = w;
                while (*p && *p != ' ' && *p != '\t') {
                        if (plain_char(*p))
                                *o++ = *p++;
                        else if (*p == '\'') {
                                const char *end = strchr(p + 1, '\'');
                                if (!end)
                                        return 0; /* sh reports the unterminated quote */
                                memcpy(o, p + 1, (size_t) (end - p - 1));
                                o += end - p - 1;
                                p = end + 1;
                        } else if (p[0] == '\\' && p[1] == '\'') {
                                *o++ = '\'';
                                p += 2;
                        } else
                                return 0;
                }
                *o = '\0';
        }
        if (n == 0)
                return 0;
        /* NAME=value first is an assignment, not a program (and a quoted
         * one is a program the shell may as well look for) */
        if (strchr(words[0], '='))
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(shell_words); i++)
                if (streq(words[0], shell_words[i]))
                        return 0;
        *ret = TAKE_PTR(words);
        return 1;
}
