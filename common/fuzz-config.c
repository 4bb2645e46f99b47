/* libFuzzer target: the configuration loader (config.h) on arbitrary files.
 *
 * The input is up to three files separated by FUZZ_SEPARATOR: spark.conf,
 * then a.conf and b.conf, which spark.conf may @include.  Inputs with ".."
 * are skipped: an include could then name any file of the host (/dev/zero).
 *
 * Oracles: config_load() never crashes or leaks; a failure comes with at
 * least one error, each one line of the form "FILE:LINE: message" naming
 * one of the files; a success re-formats (config_key_format_value) into a
 * file that loads again to equal values, key by key. */
#include <ctype.h>
#include <dirent.h>

#include "config.h"
#include "fuzz-util.h"

static const char *const file_names[] = { "spark.conf", "a.conf", "b.conf" };

static bool has_prefix(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool error_line_is_valid(const char *e) {
        const char *dir = fuzz_tmpdir(), *p;

        if (strchr(e, '\n'))
                return false;
        /* FILE: one of ours (libconfig may name it as written in @include) */
        p = strstr(e, ": ");
        if (!p || !has_prefix(e, dir))
                return false;
        /* ...:LINE: */
        p = e + strlen(dir);
        p = strchr(p, ':');
        if (!p || !isdigit((unsigned char) p[1]))
                return false;
        for (p++; isdigit((unsigned char) *p); p++)
                ;
        return p[0] == ':' && p[1] == ' ' && p[2] != '\0';
}

static void check_round_trip(const SparkConfig *c) {
        _cleanup_free_ char *text = NULL;
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_(config_done) SparkConfig again = {};
        size_t n, len = 0;
        const ConfigKey *schema = config_schema(&n);
        FILE *f = open_memstream(&text, &len);
        ConfigSection open = _CONFIG_SECTION_INVALID;
        const char *path = fuzz_tmp_path("roundtrip.conf");
        int r;

        FUZZ_ASSERT(f);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *v = NULL;

                if (schema[i].section != open) {
                        if (open != _CONFIG_SECTION_INVALID)
                                fputs("};\n", f);
                        fprintf(f, "%s: {\n", config_section_to_string(schema[i].section));
                        open = schema[i].section;
                }
                r = config_key_format_value(&schema[i], c, &v);
                if (r < 0)
                        fuzz_fail("cannot format %s: %s", schema[i].key, strerror(-r));
                fprintf(f, "  %s = %s;\n", schema[i].name, v);
        }
        fputs("};\n", f);
        FUZZ_ASSERT(fclose(f) == 0);

        FUZZ_ASSERT(fuzz_write_file(path, text, len) == 0);
        r = config_load(path, &again, &errors);
        if (r < 0)
                fuzz_fail("a loaded configuration, formatted again, does not load: %s\n%s",
                          errors && errors[0] ? errors[0] : strerror(-r), text);
        for (size_t i = 0; i < n; i++)
                if (!config_key_equal(&schema[i], c, &again))
                        fuzz_fail("%s changed in the round trip:\n%s", schema[i].key, text);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static char *read_file(const char *path, size_t *ret_len) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *text;

        if (!f)
                return NULL;
        text = calloc(1, 65536);
        if (!text)
                fuzz_fail("out of memory");
        *ret_len = fread(text, 1, 65535, f);
        return text;
}

/* The golden configurations of tests/data/config; a file's first
 * @include "inc-…" becomes @include "a.conf", appended as the second file. */
static void write_seeds(const char *dir) {
        _cleanup_(closedirp) DIR *d = opendir("tests/data/config");
        struct dirent *de;

        if (!d)
                fuzz_fail("run from the source tree: no tests/data/config");
        while ((de = readdir(d))) {
                _cleanup_free_ char *text = NULL, *inc_text = NULL, *out = NULL;
                char path[512], *inc, *end;
                size_t len = 0, inc_len = 0, out_len = 0;
                FILE *f;

                if (!strstr(de->d_name, ".conf") || has_prefix(de->d_name, "inc-"))
                        continue;
                snprintf(path, sizeof(path), "tests/data/config/%s", de->d_name);
                text = read_file(path, &len);
                if (!text)
                        continue;
                inc = strstr(text, "@include \"inc-");
                end = inc ? strchr(inc + 10, '"') : NULL;
                if (!end) {
                        fuzz_write_seed_raw(dir, de->d_name, text, len);
                        continue;
                }
                *end = 0;
                snprintf(path, sizeof(path), "tests/data/config/%s", inc + 10);
                inc_text = read_file(path, &inc_len);
                f = open_memstream(&out, &out_len);
                FUZZ_ASSERT(f);
                fprintf(f, "%.*s@include \"a.conf\"%s", (int) (inc - text), text, end + 1);
                fwrite(FUZZ_SEPARATOR, 1, FUZZ_SEPARATOR_LEN, f);
                if (inc_text)
                        fwrite(inc_text, 1, inc_len, f);
                FUZZ_ASSERT(fclose(f) == 0);
                fuzz_write_seed_raw(dir, de->d_name, out, out_len);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc, (void) argv;
        fuzz_write_seeds_if_asked(write_seeds);
        (void) fuzz_tmpdir();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_(config_done) SparkConfig c = {};
        FuzzChunk chunks[ELEMENTSOF(file_names)];
        char main_path[4096];
        size_t n;
        int r;

        if (size > 256 * 1024 || memmem(data, size, "..", 2))
                return 0;
        n = fuzz_split(data, size, chunks, ELEMENTSOF(chunks));
        for (size_t i = 0; i < ELEMENTSOF(file_names); i++) {
                const char *path = fuzz_tmp_path(file_names[i]);
                if (i < n)
                        FUZZ_ASSERT(fuzz_write_file(path, chunks[i].data, chunks[i].len) == 0);
                else
                        (void) unlink(path);
        }
        snprintf(main_path, sizeof(main_path), "%s", fuzz_tmp_path(file_names[0]));

        r = config_load(main_path, &c, &errors);
        if (r >= 0) {
                FUZZ_ASSERT(!errors);
                check_round_trip(&c);
                return 0;
        }
        if (!errors || !errors[0])
                fuzz_fail("config_load failed (%s) without an error line", strerror(-r));
        for (char **e = errors; *e; e++)
                if (!error_line_is_valid(*e))
                        fuzz_fail("not a FILE:LINE: message line: \"%s\"", *e);
        return 0;
}
