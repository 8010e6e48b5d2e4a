// placeholder until the real postinstall lands
