/* placeholder */ typedef int heron_cli_placeholder;
