; Inno Setup script for the Windows installer. Built on a Windows runner (see
; .github/workflows/package.yml), not on the Linux development machine:
;   pyinstaller packaging\crewagent.spec
;   iscc /DAppVersion=0.1.0 packaging\windows\crewagent.iss
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{7F3C2A4E-5B1D-4C8E-9A61-3D2B7E4F9C10}
AppName=CrewAgent Desktop
AppVersion={#AppVersion}
AppPublisher=CrewAgent Desktop team
DefaultDirName={autopf}\CrewAgent Desktop
DefaultGroupName=CrewAgent Desktop
DisableProgramGroupPage=yes
OutputDir=..\..\dist
OutputBaseFilename=crewagent-desktop-{#AppVersion}-windows-setup
SetupIconFile=..\icons\crewagent.ico
UninstallDisplayIcon={app}\crewagent-gui.exe
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequiredOverridesAllowed=dialog
ChangesEnvironment=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
Name: "chinesesimplified"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add crewagent to PATH (command line)"; Flags: unchecked

[Files]
Source: "..\..\dist\crewagent\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\CrewAgent Desktop"; Filename: "{app}\crewagent-gui.exe"
Name: "{autodesktop}\CrewAgent Desktop"; Filename: "{app}\crewagent-gui.exe"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\crewagent-gui.exe"; Description: "{cm:LaunchProgram,CrewAgent Desktop}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Current: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Current) then
    Current := '';
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Current) + ';') = 0;
end;
