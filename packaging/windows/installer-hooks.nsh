; Hooks of the app's NSIS installer (bundle.windows.nsis.installerHooks in tauri.conf.json).
; Tauri's installer template includes this file before MultiUser.nsh, which "installMode": "both"
; brings in; so a definition here changes how that mode behaves:
;
; Per-user by default, for everyone. MultiUser.nsh otherwise preselects the machine-wide install
; for an administrator. A standard user installs into %LOCALAPPDATA% without being asked for
; rights; the installer's "Choose Installation Options" page offers "Anyone who uses this
; computer" (Program Files, HKLM), and the command line picks without the page:
;   Partner.Console_X.Y.Z_x64-setup.exe /S /CurrentUser   silent, for the current user only
;   Partner.Console_X.Y.Z_x64-setup.exe /S /AllUsers      silent, machine-wide (needs an elevated
;                                                         prompt, SCCM/Intune or another admin context)
; (MultiUser.nsh reads /CurrentUser and /AllUsers; /S is NSIS's silent switch, /P Tauri's passive one.)
!define MULTIUSER_INSTALLMODE_DEFAULT_CURRENTUSER
