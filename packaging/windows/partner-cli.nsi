; The Windows installer of the `partner` command alone (issue #48), built on Linux with Debian's
; makensis by scripts/build-cli-installer.sh, which passes the defines below. (The release
; workflow's installer of the app is Tauri's NSIS bundle, built on a Windows runner; Tauri's
; bundler downloads NSIS plugins from outside the package registries, so it cannot run here.)
;
;   partner-cli-VERSION-x64-setup.exe              per user: %LOCALAPPDATA%\Programs\Partner Console CLI,
;                                                  its bin folder on the user's PATH; no admin rights
;   partner-cli-VERSION-x64-setup.exe /ALLUSERS    machine-wide: Program Files, on the system PATH
;                                                  (run it elevated: it refuses otherwise, exit 740)
;   /S                                             silent, with either; /D=FOLDER (last) another folder
;   "...\uninstall.exe" [/S]                       removes the files, the PATH entry and the
;                                                  Add/Remove Programs entry of the install it is in
;
; partner.exe goes in FOLDER\bin, the folder put on the PATH, and the uninstaller in FOLDER: on
; the PATH, `uninstall` typed in any terminal would run it.
;
; The PATH is edited by path-entry.exe (path-entry.c beside this file), run from the installer's
; temporary folder: NSIS's own strings stop at 1024 characters, and a longer PATH read cut short
; and written back would lose the user's other entries.

!ifndef VERSION | PRODUCT_VERSION | PARTNER_EXE | PATH_ENTRY_EXE | OUT_FILE
  !error "build with scripts/build-cli-installer.sh (VERSION, PRODUCT_VERSION, PARTNER_EXE, PATH_ENTRY_EXE, OUT_FILE)"
!endif

Unicode true
; A 64-bit installer for a 64-bit program: Program Files and the registry without redirection.
Target amd64-unicode
ManifestSupportedOS all
ManifestDPIAware true
!ifdef FAST
  ; For the tests: a debug build (80 MB stripped) compressed would take a minute or more.
  SetCompress off
!else
  SetCompressor /SOLID lzma
!endif

!include LogicLib.nsh
!include FileFunc.nsh
!include MUI2.nsh

!define PRODUCT "Partner Console CLI"
!define PUBLISHER "Partner Console developers"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\PartnerConsoleCLI"

Name "${PRODUCT} ${VERSION}"
OutFile "${OUT_FILE}"
; Per user unless /ALLUSERS: no elevation is asked for, so a user without admin rights installs.
RequestExecutionLevel user
ShowInstDetails show
ShowUninstDetails show
BrandingText "${PRODUCT} ${VERSION}"

VIProductVersion "${PRODUCT_VERSION}"
VIFileVersion "${PRODUCT_VERSION}"
VIAddVersionKey /LANG=0 "ProductName" "${PRODUCT}"
VIAddVersionKey /LANG=0 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileDescription" "${PRODUCT} ${VERSION} setup"
VIAddVersionKey /LANG=0 "CompanyName" "${PUBLISHER}"
VIAddVersionKey /LANG=0 "LegalCopyright" "MIT OR Apache-2.0"

!ifdef ICON
  !define MUI_ICON "${ICON}"
  !define MUI_UNICON "${ICON}"
!endif
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_NOAUTOCLOSE
!define MUI_UNFINISHPAGE_NOAUTOCLOSE
!define MUI_FINISHPAGE_TEXT "The partner command is installed in $INSTDIR\bin and on your PATH.$\r$\n$\r$\nOpen a new terminal and run:  partner --help"
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; 1 for a machine-wide install (/ALLUSERS, or an uninstaller found in Program Files' entry).
Var AllUsers
; "user" or "machine": which PATH path-entry.exe edits.
Var PathScope

; Machine-wide needs an elevated process: say so and stop, rather than fail half-way.
!macro RequireAdmin
  UserInfo::GetAccountType
  Pop $0
  ${If} $0 != "Admin"
    MessageBox MB_ICONSTOP "A machine-wide install (/ALLUSERS) needs administrator rights: run it from an elevated prompt, or without /ALLUSERS to install for yourself." /SD IDOK
    SetErrorLevel 740 ; ERROR_ELEVATION_REQUIRED
    Quit
  ${EndIf}
!macroend

Function .onInit
  ${GetParameters} $0
  ClearErrors
  ${GetOptions} $0 "/ALLUSERS" $1
  ${IfNot} ${Errors}
    StrCpy $AllUsers 1
  ${EndIf}
  ${If} $AllUsers == 1
    !insertmacro RequireAdmin
    SetShellVarContext all
    StrCpy $PathScope "machine"
    ; $INSTDIR is already set when /D= was given.
    ${If} $INSTDIR == ""
      StrCpy $INSTDIR "$PROGRAMFILES64\${PRODUCT}"
    ${EndIf}
  ${Else}
    SetShellVarContext current
    StrCpy $PathScope "user"
    ${If} $INSTDIR == ""
      StrCpy $INSTDIR "$LOCALAPPDATA\Programs\${PRODUCT}"
    ${EndIf}
  ${EndIf}
FunctionEnd

Section "partner"
  SetOutPath "$INSTDIR\bin"
  File "/oname=partner.exe" "${PARTNER_EXE}"
  SetOutPath "$INSTDIR"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  ; Add/Remove Programs (HKCU per user, HKLM machine-wide: SHCTX follows SetShellVarContext).
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\bin\partner.exe"
  ${If} $AllUsers == 1
    WriteRegStr SHCTX "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe" /ALLUSERS'
    WriteRegStr SHCTX "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /ALLUSERS /S'
  ${Else}
    WriteRegStr SHCTX "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
    WriteRegStr SHCTX "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  ${EndIf}
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "EstimatedSize" "$0"

  InitPluginsDir
  File "/oname=$PLUGINSDIR\path-entry.exe" "${PATH_ENTRY_EXE}"
  nsExec::ExecToLog '"$PLUGINSDIR\path-entry.exe" add $PathScope "$INSTDIR\bin"'
  Pop $0
  ${If} $0 != 0
    DetailPrint "partner.exe is installed, but its folder could not be put on the PATH ($0)"
    MessageBox MB_ICONEXCLAMATION "partner.exe is installed in $INSTDIR\bin, but that folder could not be added to the PATH: add it yourself." /SD IDOK
    SetErrors
  ${EndIf}
SectionEnd

Function un.onInit
  ; The uninstaller is in the folder it removes ($INSTDIR): machine-wide if the machine's entry
  ; names that folder, or if /ALLUSERS says so.
  ReadRegStr $0 HKLM "${UNINSTALL_KEY}" "InstallLocation"
  ${GetParameters} $1
  ClearErrors
  ${GetOptions} $1 "/ALLUSERS" $2
  ${IfNot} ${Errors}
    StrCpy $AllUsers 1
  ${ElseIf} $0 == $INSTDIR
    StrCpy $AllUsers 1
  ${EndIf}
  ${If} $AllUsers == 1
    !insertmacro RequireAdmin
    SetShellVarContext all
    StrCpy $PathScope "machine"
  ${Else}
    SetShellVarContext current
    StrCpy $PathScope "user"
  ${EndIf}
FunctionEnd

Section "Uninstall"
  InitPluginsDir
  File "/oname=$PLUGINSDIR\path-entry.exe" "${PATH_ENTRY_EXE}"
  nsExec::ExecToLog '"$PLUGINSDIR\path-entry.exe" remove $PathScope "$INSTDIR\bin"'
  Pop $0
  ${If} $0 != 0
    DetailPrint "the PATH entry $INSTDIR\bin could not be removed ($0)"
    SetErrors
  ${EndIf}
  Delete "$INSTDIR\bin\partner.exe"
  RMDir "$INSTDIR\bin"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey SHCTX "${UNINSTALL_KEY}"
SectionEnd
