/* path-entry: adds a folder to, or removes it from, the user's or the machine's PATH in the
 * registry, and tells running programs (Explorer, new consoles) that the environment changed.
 *
 *   path-entry add|remove user|machine FOLDER
 *
 * The CLI's installer (partner-cli.nsi) runs it from its temporary folder at install and at
 * uninstall. NSIS cannot do this itself safely: its strings stop at 1024 characters, a PATH may
 * hold 32,767, and a PATH read cut short and written back would lose the user's other entries.
 * Here the value is read and written whole, with its type kept (REG_EXPAND_SZ entries such as
 * %USERPROFILE%\bin stay unexpanded). FOLDER is compared with each entry ignoring case and a
 * trailing backslash; every other entry, empty ones included, is written back as it was.
 * Adding a folder already there, or removing one that is not, changes nothing. Exit status 0
 * when the PATH is as asked, 1 otherwise (with a line on stderr, shown in the installer's log).
 *
 * Built with MinGW by scripts/build-cli-installer.sh (Unicode entry point: -municode).
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

static const wchar_t USER_KEY[] = L"Environment";
static const wchar_t MACHINE_KEY[] =
    L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";

/* The entry [entry, entry + len) names FOLDER (case and one trailing backslash aside). */
static int same_folder(const wchar_t *entry, size_t len, const wchar_t *folder)
{
    size_t folder_len = wcslen(folder);
    while (len > 0 && entry[len - 1] == L'\\')
        len--;
    while (folder_len > 0 && folder[folder_len - 1] == L'\\')
        folder_len--;
    return len == folder_len && len > 0 && _wcsnicmp(entry, folder, len) == 0;
}

static int fail(const wchar_t *what, LONG code)
{
    fwprintf(stderr, L"path-entry: %ls (error %ld); the PATH was left as it was\n", what, (long)code);
    return 1;
}

int wmain(int argc, wchar_t **argv)
{
    if (argc != 4 || (wcscmp(argv[1], L"add") != 0 && wcscmp(argv[1], L"remove") != 0) ||
        (wcscmp(argv[2], L"user") != 0 && wcscmp(argv[2], L"machine") != 0) || argv[3][0] == 0) {
        fwprintf(stderr, L"usage: path-entry add|remove user|machine FOLDER\n");
        return 2;
    }
    int add = wcscmp(argv[1], L"add") == 0;
    int machine = wcscmp(argv[2], L"machine") == 0;
    const wchar_t *folder = argv[3];

    HKEY key;
    LONG rc = RegCreateKeyExW(machine ? HKEY_LOCAL_MACHINE : HKEY_CURRENT_USER,
                              machine ? MACHINE_KEY : USER_KEY, 0, NULL, 0,
                              KEY_QUERY_VALUE | KEY_SET_VALUE, NULL, &key, NULL);
    if (rc != ERROR_SUCCESS)
        return fail(L"cannot open the environment's registry key", rc);

    /* The value as it is, whole: its size first, then its bytes (with room for a terminator
     * the registry does not promise). A missing value reads as an empty PATH. */
    DWORD type = REG_EXPAND_SZ, size = 0;
    wchar_t *old = NULL;
    rc = RegQueryValueExW(key, L"Path", NULL, &type, NULL, &size);
    if (rc == ERROR_FILE_NOT_FOUND) {
        type = REG_EXPAND_SZ;
        size = 0;
    } else if (rc != ERROR_SUCCESS) {
        return fail(L"cannot read PATH", rc);
    } else if (type != REG_SZ && type != REG_EXPAND_SZ) {
        return fail(L"PATH is not a string value", (LONG)type);
    }
    old = calloc(size / sizeof(wchar_t) + 2, sizeof(wchar_t));
    if (old == NULL)
        return fail(L"out of memory", 0);
    if (size > 0) {
        rc = RegQueryValueExW(key, L"Path", NULL, &type, (BYTE *)old, &size);
        if (rc != ERROR_SUCCESS)
            return fail(L"cannot read PATH", rc);
    }

    size_t old_len = wcslen(old);
    wchar_t *new_path = calloc(old_len + wcslen(folder) + 2, sizeof(wchar_t));
    if (new_path == NULL)
        return fail(L"out of memory", 0);

    /* Every entry but FOLDER's, in order, joined as they were. */
    int found = 0, first = 1;
    const wchar_t *start = old;
    for (;;) {
        const wchar_t *end = wcschr(start, L';');
        size_t len = end ? (size_t)(end - start) : wcslen(start);
        if (same_folder(start, len, folder)) {
            found = 1;
        } else if (!(end == NULL && len == 0 && first)) {
            if (!first)
                wcscat(new_path, L";");
            wcsncat(new_path, start, len);
            first = 0;
        }
        if (end == NULL)
            break;
        start = end + 1;
    }

    if (add && found) {
        fwprintf(stderr, L"path-entry: %ls is already on the %ls PATH\n", folder, argv[2]);
        return 0;
    }
    if (!add && !found) {
        fwprintf(stderr, L"path-entry: %ls was not on the %ls PATH\n", folder, argv[2]);
        return 0;
    }
    if (add) {
        size_t len = wcslen(new_path);
        if (len > 0 && new_path[len - 1] != L';')
            wcscat(new_path, L";");
        wcscat(new_path, folder);
    }

    if (new_path[0] == 0)
        rc = RegDeleteValueW(key, L"Path");
    else
        rc = RegSetValueExW(key, L"Path", 0, type, (const BYTE *)new_path,
                            (DWORD)((wcslen(new_path) + 1) * sizeof(wchar_t)));
    if (rc != ERROR_SUCCESS)
        return fail(L"cannot write PATH", rc);
    RegCloseKey(key);

    /* New consoles and programs started from Explorer read the new PATH. */
    DWORD_PTR ignored;
    SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0, (LPARAM)L"Environment",
                        SMTO_ABORTIFHUNG, 5000, &ignored);
    fwprintf(stderr, L"path-entry: %ls %ls the %ls PATH\n", folder, add ? L"added to" : L"removed from",
             argv[2]);
    return 0;
}
