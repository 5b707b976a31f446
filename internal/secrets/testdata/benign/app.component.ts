import { Component, inject } from "@angular/core";

@Component({ selector: "app-login", templateUrl: "./login.html" })
export class LoginComponent {
  private auth = inject(AuthService);
  password: string = "";
  token?: string;

  async submit(): Promise<void> {
    this.token = await this.auth.login(this.password);
  }
}
